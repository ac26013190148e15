// A separate process preparing a declaration into a shared store: `<storeRoot> <declaration JSON> <startAtMs>`.
// Prints the results as JSON; the start time lines the processes up so their misses overlap.
import { openContentStore } from '@agentproto/content-cache';
import { prepareSkills } from '@agentproto/skill-providers';

const [root, declaration, startAt] = process.argv.slice(2) as [string, string, string];
const cache = await openContentStore({ root });
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
const started = Date.now();
// Progress on stderr, so a test that times out can show where each process was.
const prepared = await prepareSkills(JSON.parse(declaration), {
  cache,
  onProgress: (event) => process.stderr.write(`${Date.now() - started}ms ${event.type} ${event.name}\n`),
});
process.stdout.write(JSON.stringify(prepared));
