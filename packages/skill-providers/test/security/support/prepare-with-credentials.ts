// A preparation in its own process, to be killed at any point: `<storeRoot> <declaration JSON>`.
// The deploy key comes from SKILL_TEST_DEPLOY_KEY, the Basic credential from SKILL_TEST_USER
// and SKILL_TEST_PASSWORD (never from the command line). Prints `ready` on stderr just before
// preparing, and the results as JSON on stdout.
import { openContentStore } from '@agentproto/content-cache';
import { createRegistry, gitProvider, prepareSkills } from '@agentproto/skill-providers';

const [root, declaration] = process.argv.slice(2) as [string, string];
const cache = await openContentStore({ root });
process.stderr.write('ready\n');
const prepared = await prepareSkills(JSON.parse(declaration), {
  cache,
  registry: createRegistry([gitProvider({ deployKeySecretNames: ['skills-read-key'] })]),
  secrets: (name) => (name === 'skills-read-key' ? process.env.SKILL_TEST_DEPLOY_KEY : undefined),
  vault: () => ({ username: process.env.SKILL_TEST_USER ?? '', password: process.env.SKILL_TEST_PASSWORD ?? '' }),
});
process.stdout.write(JSON.stringify(prepared));
