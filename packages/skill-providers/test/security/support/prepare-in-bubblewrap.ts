// A preparation through bubblewrapSandbox in its own process, which never calls close():
// `<storeRoot> <declaration JSON>`, the Basic credential from SKILL_TEST_USER and
// SKILL_TEST_PASSWORD. Prints the results as JSON on stdout; the process must then end by
// itself (the egress proxy closed with the last grant).
import { openContentStore } from '@agentproto/content-cache';
import { bubblewrapSandbox, createRegistry, gitProvider, prepareSkills } from '@agentproto/skill-providers';

const [root, declaration] = process.argv.slice(2) as [string, string];
const cache = await openContentStore({ root });
const prepared = await prepareSkills(JSON.parse(declaration), {
  cache,
  sandbox: bubblewrapSandbox({ privateRoot: cache.privateRoot }),
  registry: createRegistry([gitProvider()]),
  vault: () => ({ username: process.env.SKILL_TEST_USER ?? '', password: process.env.SKILL_TEST_PASSWORD ?? '' }),
});
process.stdout.write(JSON.stringify(prepared));
