/**
 * How fast the built `agentproto` bin starts, against `node -e 0` measured in the same run:
 *  1. `agentproto --version`. Target ratio <= 1.6.
 *  2. `agentproto --help`. Target ratio <= 1.6.
 *  3. `agentproto plugin validate <dir>` on a package of one skill. Target ratio <= 2.5.
 *
 * Each is a fresh node process, as a user's shell starts one: wall time from spawn to exit.
 * The command and the baseline alternate every round (the order flips each round), and one
 * untimed round of each warms the page cache. The targets are measured without
 * NODE_EXTRA_CA_CERTS, as bench/aip-26.bench.ts measures the CLI: Node reads the file it
 * names at every start (40-80 ms on these machines, whose file is a large CA bundle), a
 * cost of the machine that both sides pay and that flatters every ratio. When it is set,
 * the ratios with the environment as inherited are printed beside them. The bin is
 * packages/cli/dist/bin.cjs (`pnpm bench` builds it first when it is stale), or the file
 * AGENTPROTO_BIN names, to measure another build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median, report } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const BIN = resolve(
  process.env.AGENTPROTO_BIN ?? fileURLToPath(new URL('../packages/cli/dist/bin.cjs', import.meta.url)),
);

if (!existsSync(BIN)) {
  console.error(`${BIN} does not exist: run \`npx -y pnpm@12.4.2 build\` first`);
  process.exit(1);
}

const { NODE_EXTRA_CA_CERTS: extraCaCerts, ...withoutExtraCa } = process.env;

/** Wall time of one `node <args>` to its exit, in ms; a failure stops the bench. */
function run(args: readonly string[], env: NodeJS.ProcessEnv = withoutExtraCa): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', env });
  const elapsed = performance.now() - start;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

/** Median ms of the command and of `node -e 0`, alternating, the order flipped each round. */
function compare(args: readonly string[], env?: NodeJS.ProcessEnv): { ours: number; baseline: number } {
  const baselineArgs = ['-e', '0'];
  run(args, env);
  run(baselineArgs, env);
  const ours: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      ours.push(run(args, env));
      baseline.push(run(baselineArgs, env));
    } else {
      baseline.push(run(baselineArgs, env));
      ours.push(run(args, env));
    }
  }
  return { ours: median(ours), baseline: median(baseline) };
}

const work = await mkdtemp(join(tmpdir(), 'agentproto-bench-cli-'));
try {
  // One skill, built by the bin itself (untimed), then validated.
  const source = join(work, 'source');
  await mkdir(join(source, 'skills', 'review'), { recursive: true });
  await writeFile(
    join(source, 'plugin.toml'),
    '[plugin]\nname = "acme.bench"\nversion = "1.0.0"\ndescription = "One skill."\n',
  );
  await writeFile(
    join(source, 'skills', 'review', 'SKILL.md'),
    '---\nname: review\ndescription: Reviews a change.\n---\nRead the diff, then comment.\n',
  );
  const pkg = join(work, 'acme.bench');
  run([BIN, 'plugin', 'build', join(source, 'plugin.toml'), '--out', pkg]);

  console.log(`bin: ${BIN}; ${ROUNDS} rounds each`);
  let missed = 0;
  for (const [name, args, target] of [
    ['--version', [BIN, '--version'], 1.6],
    ['--help', [BIN, '--help'], 1.6],
    ['plugin validate (one skill)', [BIN, 'plugin', 'validate', pkg], 2.5],
  ] as const) {
    const { ours, baseline } = compare(args);
    report(
      `agentproto ${name} vs node -e 0 (median ms), without NODE_EXTRA_CA_CERTS`,
      ours,
      baseline,
      'ms',
      `<= ${target}`,
    );
    if (extraCaCerts !== undefined) {
      const inherited = compare(args, process.env);
      report(`  the same as inherited (NODE_EXTRA_CA_CERTS set)`, inherited.ours, inherited.baseline, 'ms', 'none');
    }
    const ratio = ours / baseline;
    if (ratio > target) missed += 1;
    console.log(
      `summary ${name}: ${ratio.toFixed(2)}x node -e 0 (target <= ${target}, ${ratio <= target ? 'met' : 'MISSED'})`,
    );
  }
  if (missed > 0) process.exitCode = 1;
} finally {
  await rm(work, { recursive: true, force: true });
}
