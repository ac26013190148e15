/**
 * defineCode of a workspace folder in a fresh process, so its memory is measured against a
 * clean baseline: the first call (a cold process: code not yet optimized, memory not yet
 * mapped) and a second call of the same workspace (a host that bundles again, warm). Prints
 * { ms, warmMs, warmCpuMs, bundleBytes, baselineMiB, peakAboveMiB } as JSON: warmCpuMs is the
 * second call's user + system time on every thread of the process (the compressing thread
 * pool's included); the peak is the first call's.
 */
import { createHash } from 'node:crypto';
import { defineCode } from '@agentproto/aip-26';
import { resetResidentPeak, residentPeak } from '@agentproto/testkit';

const [workspaceRoot] = process.argv.slice(2);
const code = { sources: [{ local: 'src/' }] };
// Load every module the real call uses, so the baseline includes the code.
await defineCode({
  workspaceRoot: workspaceRoot!,
  code: { sources: [{ inline: { path: 'warm.txt', content: 'x' } }] },
});
globalThis.gc?.();
const baseline = process.memoryUsage().rss;
// The peak is this process's own from here: getrusage's maxRSS would also count the pages the
// bench process had when it started this one (with a large parent, its size, not ours).
resetResidentPeak();
let started = performance.now();
let bundle: Buffer | undefined = await defineCode({ workspaceRoot: workspaceRoot!, code });
const ms = performance.now() - started;
// The memory figure is the first call's: the peak so far, before a second call adds what the
// first one left resident.
const peak = residentPeak();
// Only the first bundle's digest is kept: the second call must not find two bundles in memory.
const bundleBytes = bundle.length;
const digest = createHash('sha256').update(bundle).digest('hex');
bundle = undefined;
globalThis.gc?.();
const cpu = process.cpuUsage();
started = performance.now();
const again = await defineCode({ workspaceRoot: workspaceRoot!, code });
const warmMs = performance.now() - started;
const warmCpu = process.cpuUsage(cpu);
if (createHash('sha256').update(again).digest('hex') !== digest)
  throw new Error(
    `the second bundle of the same workspace differs from the first (${again.length} bytes, the first ${bundleBytes})`,
  );
process.stdout.write(
  `${JSON.stringify({ ms, warmMs, warmCpuMs: (warmCpu.user + warmCpu.system) / 1000, bundleBytes, baselineMiB: baseline / 2 ** 20, peakAboveMiB: (peak - baseline) / 2 ** 20 })}\n`,
);
