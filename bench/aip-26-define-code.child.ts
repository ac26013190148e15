/**
 * One defineCode of a workspace folder in a fresh process, so its memory is measured against
 * a clean baseline: prints { ms, bundleBytes, baselineMiB, peakAboveMiB } as JSON.
 */
import { defineCode } from '@agentproto/aip-26';

const [workspaceRoot] = process.argv.slice(2);
// Warm up: load every module the real call uses, so the baseline includes the code.
await defineCode({
  workspaceRoot: workspaceRoot!,
  code: { sources: [{ inline: { path: 'warm.txt', content: 'x' } }] },
});
globalThis.gc?.();
const baseline = process.memoryUsage().rss;
const started = performance.now();
const bundle = await defineCode({ workspaceRoot: workspaceRoot!, code: { sources: [{ local: 'src/' }] } });
const ms = performance.now() - started;
const peak = process.resourceUsage().maxRSS * 1024;
process.stdout.write(
  `${JSON.stringify({ ms, bundleBytes: bundle.length, baselineMiB: baseline / 2 ** 20, peakAboveMiB: (peak - baseline) / 2 ** 20 })}\n`,
);
