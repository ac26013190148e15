/**
 * Runner benchmark: start to first output of a `node` bundle, isolated against bare.
 *
 * The bundle (made by aip-26 defineCode from one inline file) prints one line at once and
 * then waits for its standard input to close. What is timed is the first output, not the
 * exit: the line carries the moment the bundle wrote it (`performance.timeOrigin +
 * performance.now()`, this machine's clock, which a sandbox shares), and the bench subtracts
 * the moment it called `run`. So both runners are measured unchanged, through their public
 * `run`, each doing everything it does before the bundle starts (a fresh folder, the
 * extraction under the archive rules, the run file check, the spawn), with no output hook
 * added to either (a hook on one side only, or a re-implementation of either runner's steps,
 * would time something else than what a host runs). Breakdowns 2 and 3 check the stamp
 * against the first stdout byte seen on the pipe ("pipe minus stamp").
 *
 *  1. isolated (`@agentproto/aip-17`'s subprocess engine: bubblewrap) against bare
 *     (`@agentproto/aip-26` subprocessRunner: the same extraction, the bundle as init of an
 *     `unshare --pid` namespace, nothing else isolated). Target: isolated <= bare + 50 ms.
 *     The time to the run's return is printed beside it.
 *  Breakdown, so a reader sees where the time goes:
 *  2. `node main.js` on the already extracted bundle, first stdout byte: spawnIsolated
 *     (bundle read-only, scratch writable, no limits) against a bare spawn.
 *  3. the same with the limits the isolated runner sets by default (memory_mb 256 as
 *     RLIMIT_DATA, 256 processes): prlimit before the command, and the sandbox account's
 *     process count read from /proc for RLIMIT_NPROC.
 *  4. bwrap alone: `/usr/bin/true` through spawnIsolated (to `exited`, which waits until its
 *     PID namespace is empty) against a bare spawn of it (to `close`).
 *  5. extracting the bundle (identical on both sides of 1).
 *
 * Every pair alternates, the order flipping each round, after one untimed round of each (it
 * also pays the one-time bubblewrap check).
 */
import { spawn } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRunner, defineRunner } from '@agentproto/aip-17';
import { defineCode, extractTarGz, subprocessRunner } from '@agentproto/aip-26';
import { defaultRunAs, type ProcessLimits, spawnIsolated } from '@agentproto/sandbox';
import { median, report, time } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const TARGET_MS = 50;
const NODE = process.execPath;
const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
/** What the isolated runner sets by default: memory_mb 256 (RLIMIT_DATA), 256 processes, no CPU cap. */
const LIMITS: ProcessLimits = { memoryMb: 256, maxProcesses: 256 };

/** Prints one line with the moment it was written, then waits for stdin to close. */
const MAIN = [
  'process.stdout.write(`ready ${performance.timeOrigin + performance.now()}\\n`);',
  'process.stdin.resume();',
  "process.stdin.on('end', () => process.exit(0));",
].join('\n');

const now = () => performance.timeOrigin + performance.now();

/** The moment the bundle stamped in its first line. */
function stamped(stdout: Buffer | string): number {
  const match = /^ready (\d+(?:\.\d+)?)\n/.exec(stdout.toString());
  if (!match) throw new Error(`the bundle printed ${JSON.stringify(stdout.toString().slice(0, 200))}`);
  return Number(match[1]);
}

interface FirstOutput {
  /** ms from the call to the first stdout byte seen on the pipe. */
  pipe: number;
  /** ms from the call to the bundle's stamp. */
  stamp: number;
}

/** Runs pairs alternately (order flipped each round) after one untimed pair; returns each side's samples. */
async function alternate<T>(a: () => Promise<T>, b: () => Promise<T>): Promise<{ a: T[]; b: T[] }> {
  await a();
  await b();
  const out = { a: [] as T[], b: [] as T[] };
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      out.a.push(await a());
      out.b.push(await b());
    } else {
      out.b.push(await b());
      out.a.push(await a());
    }
  }
  return out;
}

const work = await mkdtemp(join(tmpdir(), 'agentproto-bench-runner-'));
try {
  // The sandbox's account (nobody, when this runs as root) reads the bundle and writes scratch.
  await chmod(work, 0o755);
  const bundle = await defineCode({
    code: { sources: [{ inline: { path: 'main.js', content: MAIN } }] },
    workspaceRoot: work,
  });
  const extracted = join(work, 'extracted');
  await extractTarGz(bundle, extracted, { maxBytes: 1 << 20, maxFiles: 10 });
  const scratch = join(work, 'scratch');
  await mkdir(scratch);
  await chown(scratch, defaultRunAs().uid, defaultRunAs().gid);
  console.log(`node ${process.version} (${NODE}); bundle ${bundle.length} B; ${ROUNDS} rounds per pair, alternating`);

  // --- 1. The runners, through their public run.
  const bare = subprocessRunner();
  const bareRun = async () => {
    const start = now();
    const result = await bare.run({ bundle, run: 'main.js', env: ENV, timeoutMs: 30_000 });
    const end = now();
    if (result.exitCode !== 0) throw new Error(`bare run exited ${result.exitCode}: ${result.stderr}`);
    return { first: stamped(result.stdout) - start, total: end - start };
  };
  const isolated = createRunner();
  const handle = defineRunner({ engine: 'subprocess', limits: { timeout_ms: 30_000 } }, { run: 'main.js' });
  const isolatedRun = async () => {
    const start = now();
    const outcome = await isolated.run({ runner: handle, origin: 'workspace', bundle, run: 'main.js', env: ENV });
    const end = now();
    if (outcome.reason.kind !== 'exit' || outcome.reason.code !== 0)
      throw new Error(`isolated run: ${JSON.stringify(outcome.reason)}: ${outcome.stderr}`);
    return { first: stamped(outcome.stdout) - start, total: end - start };
  };
  const runs = await alternate(isolatedRun, bareRun);
  const isolatedFirst = median(runs.a.map((r) => r.first));
  const bareFirst = median(runs.b.map((r) => r.first));
  report(
    'start to first output, isolated vs bare subprocess runner (median ms)',
    isolatedFirst,
    bareFirst,
    'ms',
    `<= bare + ${TARGET_MS} ms`,
  );
  console.log(
    `  per-round ms: isolated ${runs.a.map((r) => r.first.toFixed(0)).join(' ')}; bare ${runs.b.map((r) => r.first.toFixed(0)).join(' ')}`,
  );
  console.log(
    `  difference of the medians ${(isolatedFirst - bareFirst).toFixed(1)} ms; median of the per-round differences ${median(runs.a.map((r, i) => r.first - runs.b[i]!.first)).toFixed(1)} ms`,
  );
  report(
    '  start to return (median ms)',
    median(runs.a.map((r) => r.total)),
    median(runs.b.map((r) => r.total)),
    'ms',
    'none, for context',
  );

  // --- 2. and 3. node's first byte on an extracted bundle, spawnIsolated against a bare spawn.
  const isolatedNode = (limits?: ProcessLimits) => () =>
    firstOutput(() =>
      spawnIsolated({
        argv: ['node', '/bundle/main.js'],
        env: ENV,
        cwd: '/bundle',
        mounts: [
          { source: extracted, target: '/bundle' },
          { source: scratch, target: '/tmp', writable: true },
        ],
        ...(limits ? { limits } : {}),
        timeoutMs: 30_000,
      }),
    );
  const bareNode = () =>
    firstOutput(() => {
      const child = spawn(NODE, [join(extracted, 'main.js')], { cwd: extracted, env: ENV, stdio: 'pipe' });
      return {
        stdin: child.stdin,
        stdout: child.stdout,
        exited: new Promise<unknown>((resolve) => child.once('close', resolve)),
      };
    });
  for (const [name, limits] of [
    ['node, first stdout byte: spawnIsolated vs bare spawn (median ms)', undefined],
    ['node, first stdout byte: spawnIsolated with limits vs bare spawn (median ms)', LIMITS],
  ] as const) {
    const pair = await alternate(isolatedNode(limits), bareNode);
    const ours = median(pair.a.map((r) => r.pipe));
    const base = median(pair.b.map((r) => r.pipe));
    report(name, ours, base, 'ms', 'none, breakdown');
    console.log(
      `  difference ${(ours - base).toFixed(1)} ms; pipe minus stamp: isolated ${median(pair.a.map((r) => r.pipe - r.stamp)).toFixed(2)} ms, bare ${median(pair.b.map((r) => r.pipe - r.stamp)).toFixed(2)} ms`,
    );
  }

  // --- 4. bwrap alone.
  const isolatedTrue = () =>
    time(async () => {
      const child = spawnIsolated({ argv: ['/usr/bin/true'], env: ENV, timeoutMs: 30_000 });
      const exit = await child.exited;
      if (exit.code !== 0) throw new Error(`isolated true: ${JSON.stringify(exit.reason)}`);
    });
  const bareTrue = () =>
    time(
      () =>
        new Promise<void>((resolve, reject) => {
          const child = spawn('/usr/bin/true', [], { env: ENV, stdio: 'pipe' });
          child.once('error', reject);
          child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`true exited ${code}`))));
        }),
    );
  const trues = await alternate(isolatedTrue, bareTrue);
  const trueOurs = median(trues.a);
  const trueBase = median(trues.b);
  report(
    'bwrap alone: /usr/bin/true, spawnIsolated vs bare spawn, to exit (median ms)',
    trueOurs,
    trueBase,
    'ms',
    'none, breakdown',
  );
  console.log(`  difference ${(trueOurs - trueBase).toFixed(1)} ms`);

  // --- 5. Extraction.
  let n = 0;
  const extractions: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const dest = join(work, `x${n++}`);
    extractions.push(await time(() => extractTarGz(bundle, dest, { maxBytes: 1 << 20, maxFiles: 10 })));
    await rm(dest, { recursive: true, force: true });
  }
  console.log(`extracting the bundle (both sides of 1): median ${median(extractions).toFixed(2)} ms`);

  const difference = isolatedFirst - bareFirst;
  console.log(
    `summary: start to first output, isolated ${isolatedFirst.toFixed(1)} ms vs bare ${bareFirst.toFixed(1)} ms: ` +
      `+${difference.toFixed(1)} ms, ratio ${(isolatedFirst / bareFirst).toFixed(3)} (target <= bare + ${TARGET_MS} ms, ${difference <= TARGET_MS ? 'met' : 'MISSED'}); ` +
      `bwrap alone +${(trueOurs - trueBase).toFixed(1)} ms`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}

/** Starts a process, times its first stdout byte (and the stamp in it), then closes its stdin and waits for it. */
async function firstOutput(
  start: () => { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream; exited: Promise<unknown> },
): Promise<FirstOutput> {
  const begin = now();
  const child = start();
  const first = await new Promise<{ at: number; data: Buffer }>((resolve) =>
    child.stdout.once('data', (data: Buffer) => resolve({ at: now(), data })),
  );
  child.stdout.resume();
  child.stdin.end();
  await child.exited;
  return { pipe: first.at - begin, stamp: stamped(first.data) - begin };
}
