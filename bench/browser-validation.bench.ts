/**
 * Validation wherever JavaScript runs (issue 17).
 *  1. The size of what a web product ships to validate a plugin: validatePlugin, the three
 *     upload readers and explain, bundled for a browser by esbuild (minified ESM, the
 *     `browser` export condition) from the built packages, as a host installs them (`pnpm
 *     bench` builds what is stale first), and gzipped at level 9, beside the 150 KB budget.
 *     The same bundle from the TypeScript sources, the whole browser entry (every export) and
 *     the largest inputs are printed too.
 *  2. Validating the golden 1.1.0 package held in memory (a tree, and a zip read into one)
 *     against validating the folder on disk, alternating, in the same run. No target: the
 *     in-memory path does the same checks without system calls.
 */
import { fileURLToPath } from 'node:url';
import { readZip, validatePlugin } from '@agentproto/agent-plugins';
import { bundleForBrowser } from '@agentproto/testkit';
import { folderTree, zipOf } from '../packages/agent-plugins/test/support/archives.ts';
import { median, report, time } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const root = fileURLToPath(new URL('..', import.meta.url));
const BUILT = { conditions: [] };
const SOURCES = { conditions: ['@agentproto/source'] };
const KB = 1024;
const ENTRY = `export { validatePlugin, readZip, readTarGz, readUploadedFiles, explain } from '@agentproto/agent-plugins';`;

const validation = await bundleForBrowser(ENTRY, root, BUILT);
report('browser bundle for validation (gzipped)', validation.gzipBytes / KB, 150, 'KB', '<= 1.0 of the 150 KB budget');
const fromSources = await bundleForBrowser(ENTRY, root, SOURCES);
console.log(
  `  minified ${(validation.bytes / KB).toFixed(1)} KB; from the TypeScript sources ${(fromSources.gzipBytes / KB).toFixed(1)} KB gzipped, largest inputs there (minified bytes):`,
);
for (const [input, bytes] of [...fromSources.inputs].sort((a, b) => b[1] - a[1]).slice(0, 8))
  console.log(`    ${(bytes / KB).toFixed(1).padStart(6)} KB  ${input}`);
const whole = await bundleForBrowser(`export * from '@agentproto/agent-plugins';`, root, BUILT);
console.log(`  the whole browser entry: ${(whole.gzipBytes / KB).toFixed(1)} KB gzipped`);

const golden = fileURLToPath(new URL('../packages/agent-plugins/test/golden/1.1.0/', import.meta.url));
const tree = folderTree(golden);
const zip = zipOf(tree);
const folderTimes: number[] = [];
const treeTimes: number[] = [];
const zipTimes: number[] = [];
for (let round = -3; round < ROUNDS; round++) {
  const sides = [
    () => time(() => validatePlugin(golden)).then((ms) => round >= 0 && folderTimes.push(ms)),
    () => time(() => validatePlugin(tree)).then((ms) => round >= 0 && treeTimes.push(ms)),
    () => time(() => validatePlugin(readZip(zip))).then((ms) => round >= 0 && zipTimes.push(ms)),
  ];
  if (round % 2 === 1) sides.reverse();
  for (const side of sides) await side();
}
report('golden package in memory (tree) vs the folder', median(treeTimes), median(folderTimes), 'ms', 'none');
report('golden package as a zip vs the folder', median(zipTimes), median(folderTimes), 'ms', 'none');
