// A separate process preparing a declaration into a shared store: `<storeRoot> <declaration JSON> <startAtMs>`.
// Prints the results as JSON; the start time lines the processes up so their misses overlap.
import { openContentStore } from '@agentproto/content-cache';
import { prepareSkills } from '@agentproto/skill-providers';

const [root, declaration, startAt] = process.argv.slice(2) as [string, string, string];
const cache = await openContentStore({ root });
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
const prepared = await prepareSkills(JSON.parse(declaration), { cache });
process.stdout.write(JSON.stringify(prepared));
