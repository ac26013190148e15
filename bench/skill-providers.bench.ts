/**
 * Skill provider benchmarks (git provider, system git engine).
 *  1. Cold preparation of one 50-file skill from a repository of 20,000 files and 1,000
 *     commits, served over smart HTTP by the testkit, against
 *     `git clone --depth 1 --filter=blob:none --sparse <url> <dir>` followed by
 *     `git -C <dir> sparse-checkout set <skill dir>`, in the same run, alternating.
 *     Targets: wall time ratio <= 1.0, bytes served ratio <= 1.2.
 *  2. Warm preparation (the same declaration against a store that already holds the skill)
 *     against `git ls-remote <url>`, alternating. Target wall time ratio <= 1.5; the bytes
 *     served should be only the ref listing.
 *
 * The repository is built in a temp folder on every run (nothing is cached between runs):
 * testkit's makeRepo writes all blobs as one pack and makes the 1,000 commits with one
 * `git fast-import`. The baseline git runs with no user or system config, protocol v2.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openContentStore, type ContentStore } from '@agentproto/content-cache';
import { prepareSkills, type PreparedSkill } from '@agentproto/skill-providers';
import {
  type GitHttpServer,
  type GitHttpStats,
  isolatedGitEnv,
  makeRepo,
  run,
  startGitHttpServer,
  tempDir,
} from '@agentproto/testkit';
import { median, report, time } from './lib.ts';
import {
  COMMITS,
  FILES_PER_SKILL,
  SKILLS,
  TARGET,
  buildSkillRepoSpec as buildSpec,
  skillRepoName,
} from './skill-repo.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 15);

const skillName = skillRepoName;
const SKILL_DIR = `skills/${skillName(TARGET)}`;

const work = await tempDir('agentproto-bench-skills-');
let server: GitHttpServer | undefined;
try {
  // --- The repository, built fresh.
  const buildStart = performance.now();
  const spec = buildSpec(join(work.path, 'repos'));
  const generated = performance.now();
  const repo = await makeRepo(spec);
  const built = performance.now();
  const fileCount = (await repo.git('ls-tree', '-r', '--name-only', 'main')).split('\n').filter(Boolean).length;
  const commitCount = Number((await repo.git('rev-list', '--count', 'main')).trim());
  const repoKiB = Number((await run('du', ['-sk', repo.path])).stdout.split('\t')[0]);
  console.log(
    `repository: ${fileCount} files, ${commitCount} commits, ${(repoKiB / 1024).toFixed(1)} MiB on disk; built in ${((built - buildStart) / 1000).toFixed(2)} s ` +
      `(content ${((generated - buildStart) / 1000).toFixed(2)} s, makeRepo: blob pack + one fast-import ${((built - generated) / 1000).toFixed(2)} s)`,
  );
  if (fileCount !== SKILLS * FILES_PER_SKILL || commitCount !== COMMITS)
    throw new Error('the repository is not the one specified');

  server = await startGitHttpServer({ root: spec.root });
  const url = server.urlFor('skills.git');
  const declaration = [{ provider: 'git', source: url, version: 'main', path: SKILL_DIR, name: skillName(TARGET) }];
  const gitEnv = isolatedGitEnv();
  const git = (...args: string[]) => run('git', ['-c', 'protocol.version=2', ...args], { env: gitEnv });
  const stats = server.stats;
  const srv = server;

  /** Runs `work`, returning its wall time and what the server answered meanwhile. */
  async function measured<T>(
    body: () => Promise<T>,
  ): Promise<{ ms: number; bytes: number; requests: number; log: GitHttpStats['log']; value: T }> {
    srv.resetStats();
    let value!: T;
    const ms = await time(async () => {
      value = await body();
    });
    return { ms, bytes: stats.bytesServed, requests: stats.requests, log: [...stats.log], value };
  }

  const describeLog = (log: GitHttpStats['log']) =>
    log
      .map(
        (e) =>
          `${e.method} ${e.path.replace(/^.*\.git/, '')}${e.query ? `?${e.query}` : ''} ${e.status} ${formatBytes(e.bytes)}${e.gitProtocol ? ` [${e.gitProtocol}]` : ''}`,
      )
      .join('; ');

  const filesIn = async (dir: string) =>
    (await readdir(dir, { recursive: true, withFileTypes: true })).filter((d) => d.isFile()).length;
  let failures = 0;
  const check = (ok: boolean, message: string) => {
    if (!ok) {
      failures += 1;
      console.error(`CHECK FAILED: ${message}`);
    }
  };

  // --- 1. Cold preparation against a sparse, blobless, shallow clone.
  console.log(
    `cold: ${ROUNDS} rounds each, alternating (order flips every round); skill ${SKILL_DIR} (${FILES_PER_SKILL} files)`,
  );
  const ours = { ms: [] as number[], bytes: [] as number[], requests: [] as number[] };
  const base = { ms: [] as number[], bytes: [] as number[], requests: [] as number[] };
  const oursCold = async (round: number) => {
    const cache = await openContentStore({ root: join(work.path, `store-cold-${round}`) });
    const m = await measured(() => prepareSkills(declaration, { cache }));
    const [skill] = m.value;
    check(skill?.hit === false, `cold round ${round}: expected a fetch, got hit=${skill?.hit}`);
    if (skill)
      check(
        (await filesIn(skill.dir)) === FILES_PER_SKILL,
        `cold round ${round}: ${skill.dir} does not hold ${FILES_PER_SKILL} files`,
      );
    if (round === 0) console.log(`  ours, round 0: ${m.requests} requests: ${describeLog(m.log)}`);
    ours.ms.push(m.ms);
    ours.bytes.push(m.bytes);
    ours.requests.push(m.requests);
    await rm(cache.root, { recursive: true, force: true });
  };
  const baselineCold = async (round: number) => {
    const dir = join(work.path, `clone-${round}`);
    const m = await measured(async () => {
      await git('clone', '--depth', '1', '--filter=blob:none', '--sparse', url, dir);
      await git('-C', dir, 'sparse-checkout', 'set', SKILL_DIR);
    });
    check(
      (await filesIn(join(dir, SKILL_DIR))) === FILES_PER_SKILL,
      `baseline round ${round}: ${SKILL_DIR} does not hold ${FILES_PER_SKILL} files`,
    );
    if (round === 0) console.log(`  baseline, round 0: ${m.requests} requests: ${describeLog(m.log)}`);
    base.ms.push(m.ms);
    base.bytes.push(m.bytes);
    base.requests.push(m.requests);
    await rm(dir, { recursive: true, force: true });
  };
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await oursCold(round);
      await baselineCold(round);
    } else {
      await baselineCold(round);
      await oursCold(round);
    }
  }
  const coldTime = median(ours.ms) / median(base.ms);
  const coldBytes = median(ours.bytes) / median(base.bytes);
  report(
    'cold preparation vs git clone --depth 1 --filter=blob:none --sparse + sparse-checkout set (median ms)',
    median(ours.ms),
    median(base.ms),
    'ms',
    '<= 1.0',
  );
  console.log(
    `  per-round ms: ours ${ours.ms.map((v) => v.toFixed(0)).join(' ')}; baseline ${base.ms.map((v) => v.toFixed(0)).join(' ')}`,
  );
  console.log(`  per-round ratios: ${pairedRatios(ours.ms, base.ms)}`);
  report(
    'cold preparation, bytes served by the server (median KiB)',
    median(ours.bytes) / 1024,
    median(base.bytes) / 1024,
    'KiB',
    '<= 1.2',
  );
  console.log(
    `  requests per round: ours ${ours.requests.join(' ')}, baseline ${base.requests.join(' ')}; bytes per round: ours ${ours.bytes.join(' ')}, baseline ${base.bytes.join(' ')}`,
  );
  console.log(
    `summary cold: ours ${median(ours.ms).toFixed(0)} ms / ${formatBytes(median(ours.bytes))} vs sparse clone ${median(base.ms).toFixed(0)} ms / ${formatBytes(median(base.bytes))}: ` +
      `time ${coldTime.toFixed(3)}x (target <= 1.0, ${coldTime <= 1.0 ? 'met' : 'MISSED'}), bytes ${coldBytes.toFixed(3)}x (target <= 1.2, ${coldBytes <= 1.2 ? 'met' : 'MISSED'})`,
  );

  // --- 2. Warm preparation (a hit) against git ls-remote.
  const warmCache: ContentStore = await openContentStore({ root: join(work.path, 'store-warm') });
  const [first] = await prepareSkills(declaration, { cache: warmCache });
  check(first?.hit === false, 'warm store: the first preparation should fetch');
  console.log(`warm: ${WARM_ROUNDS} rounds each, alternating (order flips every round); store already holds the skill`);
  const warmOurs = { ms: [] as number[], bytes: [] as number[], requests: [] as number[] };
  const warmBase = { ms: [] as number[], bytes: [] as number[], requests: [] as number[] };
  const oursWarm = async (round: number) => {
    const m = await measured(() => prepareSkills(declaration, { cache: warmCache }));
    const [skill] = m.value as PreparedSkill[];
    check(skill?.hit === true, `warm round ${round}: expected a hit, got hit=${skill?.hit}`);
    if (round === 0) console.log(`  ours, round 0: ${m.requests} requests: ${describeLog(m.log)}`);
    warmOurs.ms.push(m.ms);
    warmOurs.bytes.push(m.bytes);
    warmOurs.requests.push(m.requests);
  };
  const baselineWarm = async (round: number) => {
    const m = await measured(() => git('ls-remote', url));
    if (round === 0) console.log(`  baseline, round 0: ${m.requests} requests: ${describeLog(m.log)}`);
    warmBase.ms.push(m.ms);
    warmBase.bytes.push(m.bytes);
    warmBase.requests.push(m.requests);
  };
  for (let round = 0; round < WARM_ROUNDS; round++) {
    if (round % 2 === 0) {
      await oursWarm(round);
      await baselineWarm(round);
    } else {
      await baselineWarm(round);
      await oursWarm(round);
    }
  }
  const warmTime = median(warmOurs.ms) / median(warmBase.ms);
  report(
    'warm preparation (hit) vs git ls-remote (median ms)',
    median(warmOurs.ms),
    median(warmBase.ms),
    'ms',
    '<= 1.5',
  );
  console.log(
    `  per-round ms: ours ${warmOurs.ms.map((v) => v.toFixed(0)).join(' ')}; baseline ${warmBase.ms.map((v) => v.toFixed(0)).join(' ')}`,
  );
  console.log(`  per-round ratios: ${pairedRatios(warmOurs.ms, warmBase.ms)}`);
  console.log(
    `  bytes served: ours median ${median(warmOurs.bytes)} B in ${median(warmOurs.requests)} requests, git ls-remote median ${median(warmBase.bytes)} B in ${median(warmBase.requests)} requests`,
  );
  console.log(
    `summary warm: ours ${median(warmOurs.ms).toFixed(1)} ms / ${formatBytes(median(warmOurs.bytes))} vs git ls-remote ${median(warmBase.ms).toFixed(1)} ms / ${formatBytes(median(warmBase.bytes))}: ` +
      `time ${warmTime.toFixed(3)}x (target <= 1.5, ${warmTime <= 1.5 ? 'met' : 'MISSED'})`,
  );
  if (failures > 0) process.exitCode = 1;
} finally {
  await server?.close();
  await work.cleanup();
}

/** Each round's ratio (the two sides of a round ran back to back), and their median. */
function pairedRatios(ours: number[], baseline: number[]): string {
  const ratios = ours.map((o, i) => o / baseline[i]!);
  return `${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(3)}`;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / 2 ** 20).toFixed(2)} MiB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${bytes} B`;
}
