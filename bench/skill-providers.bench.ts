/**
 * Skill provider benchmarks (git provider, system git engine).
 *  1. Cold preparation of one 50-file skill from a repository of 20,000 files and 1,000
 *     commits, served over smart HTTP by the testkit, against
 *     `git clone --depth 1 --filter=blob:none --sparse <url> <dir>` followed by
 *     `git -C <dir> sparse-checkout set <skill dir>`, in the same run, alternating.
 *     Targets: wall time ratio <= 0.8, bytes served ratio <= 1.2.
 *  2. The same from a repository of 200,000 files (the skill at depth 3) and 1,000 commits.
 *     Targets: wall time ratio <= 0.8, bytes served ratio <= 0.1 (only the trees on the
 *     way to the skill and the skill's own, never every tree of the commit).
 *  3. Warm preparation (the same declaration against a store that already holds the skill)
 *     against `git ls-remote <url>`, alternating. Target wall time ratio <= 1.5; the bytes
 *     served should be only the ref listing.
 *
 * Each cold preparation runs in a localSandbox whose commands are counted (round 0 prints
 * them, with their ms). Both sides' CPU time (this process and every process it waited for:
 * git, and the server's http-backend) is printed beside the wall time. BENCH_SKILL_CASES=20k or =200k runs one repository only.
 *
 * The repositories are built in a temp folder on every run (nothing is cached between
 * runs), in a child process so this one never holds their content: testkit's makeRepo
 * writes all blobs as one pack and makes the 1,000 commits with one `git fast-import`. The baseline git runs with no user or system config, protocol v2.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { openContentStore, type ContentStore } from '@agentproto/content-cache';
import { localSandbox, prepareSkills, type PreparedSkill, type Sandbox } from '@agentproto/skill-providers';
import {
  type GitHttpServer,
  type GitHttpStats,
  isolatedGitEnv,
  run,
  startGitHttpServer,
  tempDir,
} from '@agentproto/testkit';
import { median, report, time } from './lib.ts';
import { FILES_PER_SKILL, TARGET, bigSkillDir, skillRepoName } from './skill-repo.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 15);
const CASES = (process.env.BENCH_SKILL_CASES ?? '20k,200k').split(',');
const CHILD = fileURLToPath(new URL('./skill-repo.child.ts', import.meta.url));

const skillName = skillRepoName;

const work = await tempDir('agentproto-bench-skills-');
let server: GitHttpServer | undefined;
try {
  const reposRoot = join(work.path, 'repos');
  /** Builds a repository fresh in a child process (see skill-repo.child.ts), which prints what it is. */
  const build = (label: string) => {
    const child = spawnSync(process.execPath, [...process.execArgv, CHILD, label, reposRoot], { stdio: 'inherit' });
    if (child.status !== 0)
      throw new Error(`building the repository ${label} failed (${child.signal ?? child.status})`);
  };
  if (CASES.includes('20k')) build('20k');
  if (CASES.includes('200k')) build('200k');

  server = await startGitHttpServer({ root: reposRoot });
  const gitEnv = isolatedGitEnv();
  const git = (...args: string[]) => run('git', ['-c', 'protocol.version=2', ...args], { env: gitEnv });
  const stats = server.stats;
  const srv = server;

  /** Runs `work`, returning its wall time and what the server answered meanwhile. */
  async function measured<T>(
    body: () => Promise<T>,
  ): Promise<{ ms: number; cpu: number; bytes: number; requests: number; log: GitHttpStats['log']; value: T }> {
    srv.resetStats();
    let value!: T;
    const before = cpuMs();
    const ms = await time(async () => {
      value = await body();
    });
    const cpu = cpuMs() - before;
    return { ms, cpu, bytes: stats.bytesServed, requests: stats.requests, log: [...stats.log], value };
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

  /** Cold preparation against a sparse, blobless, shallow clone, alternating. */
  const coldCase = async (
    label: string,
    repoName: string,
    skillDir: string,
    timeTarget: number,
    bytesTarget: number,
  ) => {
    const url = srv.urlFor(repoName);
    const declaration = [{ provider: 'git', source: url, version: 'main', path: skillDir, name: skillName(TARGET) }];
    console.log(
      `cold ${label}: ${ROUNDS} rounds each, alternating (order flips every round); skill ${skillDir} (${FILES_PER_SKILL} files)`,
    );
    const ours = {
      ms: [] as number[],
      cpu: [] as number[],
      bytes: [] as number[],
      requests: [] as number[],
      commands: [] as number[],
    };
    const base = { ms: [] as number[], cpu: [] as number[], bytes: [] as number[], requests: [] as number[] };
    const oursCold = async (round: number) => {
      const cache = await openContentStore({ root: join(work.path, `store-cold-${label}-${round}`) });
      const commands: { name: string; ms: number }[] = [];
      const sandbox = counted(localSandbox({ privateRoot: cache.privateRoot }), commands);
      const m = await measured(() => prepareSkills(declaration, { cache, sandbox }));
      const [skill] = m.value;
      check(skill?.hit === false, `cold ${label} round ${round}: expected a fetch, got hit=${skill?.hit}`);
      if (skill)
        check(
          (await filesIn(skill.dir)) === FILES_PER_SKILL,
          `cold ${label} round ${round}: ${skill.dir} does not hold ${FILES_PER_SKILL} files`,
        );
      if (round === 0) {
        console.log(`  ours, round 0: ${m.requests} requests: ${describeLog(m.log)}`);
        console.log(`  ours, round 0: ${commands.length} commands: ${summarize(commands)}`);
      }
      ours.ms.push(m.ms);
      ours.cpu.push(m.cpu);
      ours.bytes.push(m.bytes);
      ours.requests.push(m.requests);
      ours.commands.push(commands.length);
      await rm(cache.root, { recursive: true, force: true });
    };
    const baselineCold = async (round: number) => {
      const dir = join(work.path, `clone-${label}-${round}`);
      const m = await measured(async () => {
        await git('clone', '--depth', '1', '--filter=blob:none', '--sparse', url, dir);
        await git('-C', dir, 'sparse-checkout', 'set', skillDir);
      });
      check(
        (await filesIn(join(dir, skillDir))) === FILES_PER_SKILL,
        `baseline ${label} round ${round}: ${skillDir} does not hold ${FILES_PER_SKILL} files`,
      );
      if (round === 0) console.log(`  baseline, round 0: ${m.requests} requests: ${describeLog(m.log)}`);
      base.ms.push(m.ms);
      base.cpu.push(m.cpu);
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
      `cold preparation ${label} vs git clone --depth 1 --filter=blob:none --sparse + sparse-checkout set (median ms)`,
      median(ours.ms),
      median(base.ms),
      'ms',
      `<= ${timeTarget}`,
    );
    console.log(
      `  per-round ms: ours ${ours.ms.map((v) => v.toFixed(0)).join(' ')}; baseline ${base.ms.map((v) => v.toFixed(0)).join(' ')}`,
    );
    console.log(`  per-round ratios: ${pairedRatios(ours.ms, base.ms)}`);
    // CPU of this process and of the processes it waited for (git on both sides, and the
    // server's http-backend and upload-pack): steadier than wall time on a busy machine.
    console.log(
      `  CPU ms (this process + children, server included): ours ${ours.cpu.join(' ')}; baseline ${base.cpu.join(' ')}; medians ${median(ours.cpu)} vs ${median(base.cpu)}, ratio ${(median(ours.cpu) / median(base.cpu)).toFixed(3)}`,
    );
    report(
      `cold preparation ${label}, bytes served by the server (median KiB)`,
      median(ours.bytes) / 1024,
      median(base.bytes) / 1024,
      'KiB',
      `<= ${bytesTarget}`,
    );
    console.log(
      `  requests per round: ours ${ours.requests.join(' ')}, baseline ${base.requests.join(' ')}; commands per round: ours ${ours.commands.join(' ')}; bytes per round: ours ${ours.bytes.join(' ')}, baseline ${base.bytes.join(' ')}`,
    );
    console.log(
      `summary cold ${label}: ours ${median(ours.ms).toFixed(0)} ms / ${formatBytes(median(ours.bytes))} vs sparse clone ${median(base.ms).toFixed(0)} ms / ${formatBytes(median(base.bytes))}: ` +
        `time ${coldTime.toFixed(3)}x (target <= ${timeTarget}, ${coldTime <= timeTarget ? 'met' : 'MISSED'}), bytes ${coldBytes.toFixed(3)}x (target <= ${bytesTarget}, ${coldBytes <= bytesTarget ? 'met' : 'MISSED'})`,
    );
  };

  if (CASES.includes('20k')) await coldCase('20k', 'skills.git', `skills/${skillName(TARGET)}`, 0.8, 1.2);
  if (CASES.includes('200k')) await coldCase('200k', 'big.git', bigSkillDir(TARGET), 0.8, 0.1);
  if (CASES.includes('20k')) {
    // --- 3. Warm preparation (a hit) against git ls-remote.
    const url = srv.urlFor('skills.git');
    const declaration = [
      { provider: 'git', source: url, version: 'main', path: `skills/${skillName(TARGET)}`, name: skillName(TARGET) },
    ];

    const warmCache: ContentStore = await openContentStore({ root: join(work.path, 'store-warm') });
    const [first] = await prepareSkills(declaration, { cache: warmCache });
    check(first?.hit === false, 'warm store: the first preparation should fetch');
    console.log(
      `warm: ${WARM_ROUNDS} rounds each, alternating (order flips every round); store already holds the skill`,
    );
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
  }
  if (failures > 0) process.exitCode = 1;
} finally {
  await server?.close();
  await work.cleanup();
}

/** CPU ms of this process and of its waited-for children so far (utime, stime, cutime, cstime of /proc/self/stat). */
function cpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(')')[1]?.trim().split(' ') ?? [];
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index] ?? 0), 0);
  return ticks * 10;
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

/** The sandbox, with every command it runs and its ms pushed to `commands`. */
function counted(sandbox: Sandbox, commands: { name: string; ms: number }[]): Sandbox {
  return {
    ...sandbox,
    async run(argv, options) {
      const start = performance.now();
      try {
        return await sandbox.run(argv, options);
      } finally {
        commands.push({ name: commandName(argv), ms: performance.now() - start });
      }
    },
  };
}

/** `git fetch` for `git -c a=b --git-dir=… fetch …`, also behind the pack cap (`prlimit … -- sh -c '…' git …`). */
function commandName(argv: readonly string[]): string {
  const program = argv[0]?.split('/').pop() ?? '';
  if (program === 'prlimit' && argv.includes('--')) {
    let rest = argv.slice(argv.indexOf('--') + 1);
    if (rest[0]?.split('/').pop() === 'sh' && rest[1] === '-c') rest = rest.slice(3);
    return commandName(rest);
  }
  if (program !== 'git') return program;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-c' || arg === '-C') i++;
    else if (!arg.startsWith('-')) return `git ${arg}`;
  }
  return 'git';
}

/** `git fetch x2 (40+35 ms), git cat-file x1 (3 ms)` in first-seen order. */
function summarize(commands: { name: string; ms: number }[]): string {
  const counts = new Map<string, number[]>();
  for (const { name, ms } of commands) counts.set(name, [...(counts.get(name) ?? []), ms]);
  return [...counts]
    .map(([name, ms]) => `${name} x${ms.length} (${ms.map((v) => v.toFixed(0)).join('+')} ms)`)
    .join(', ');
}
