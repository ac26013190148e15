/**
 * Skill acquisition in a sandbox: cold preparation of the 50-file skill from the 20,000-file,
 * 1,000-commit repository of skill-providers.bench.ts (skill-repo.ts, built fresh, served
 * over smart HTTP by the testkit), through `bubblewrapSandbox()` against `localSandbox()`,
 * in the same run, alternating (the order flips every round). Target: wall time ratio <= 1.2
 * against a localSandbox that runs git for every step (the same commands, unisolated: the cost
 * of isolation); the default localSandbox, which speaks HTTP in-process, is printed beside.
 *
 * Each side makes its sandbox inside the timed part, as prepareSkills does with its default
 * localSandbox, and the bubblewrap one is closed there too (its egress proxy stops): a cold
 * preparation pays for the whole boundary. Both run the system git engine; localSandbox
 * lists refs in-process (`capabilities.inProcess`), the bubblewrap one runs git for every
 * step, so each round also counts the commands the sandbox ran (`git <subcommand>`) and the
 * time spent in them, and the time to grant egress (the proxy's start). The entry's
 * commands run in one sandbox of its own (bwrap, its init, the egress bridge and a shell
 * that runs each command: a fork and git's exec), started at the grant; its remote
 * commands go through the bridge and the host-side proxy.
 * Last, one command through each sandbox (`git --version`, `git ls-remote`), alternating:
 * in an entry's sandbox (working in its private folder), and alone (a sandbox of its own,
 * with the egress bridge for the listing), beside localSandbox.
 */
import { spawnSync } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openContentStore } from '@agentproto/content-cache';
import { bubblewrapSandbox, localSandbox, prepareSkills, type Sandbox } from '@agentproto/skill-providers';
import { fileURLToPath } from 'node:url';
import { type GitHttpServer, startGitHttpServer, tempDir } from '@agentproto/testkit';
import { median, report } from './lib.ts';
import { FILES_PER_SKILL, TARGET, skillRepoName } from './skill-repo.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TARGET_RATIO = 1.2;
const SKILL_DIR = `skills/${skillRepoName(TARGET)}`;
const CHILD = fileURLToPath(new URL('./skill-repo.child.ts', import.meta.url));

/** What one preparation did through its sandbox. */
interface Tally {
  /** `git <subcommand>` (or the program) of each command run, in order, and its ms. */
  commands: { name: string; ms: number }[];
  /** ms spent inside sandbox.run, summed. */
  runMs: number;
  /** ms spent in allowEgress, summed. */
  egressMs: number;
}

/** The sandbox, with every command it runs and the time it spends counted in `tally`. */
function counted(sandbox: Sandbox, tally: Tally): Sandbox {
  const timed = async <T>(add: (ms: number) => void, body: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await body();
    } finally {
      add(performance.now() - start);
    }
  };
  return {
    name: sandbox.name,
    capabilities: sandbox.capabilities,
    run(argv, options) {
      const name = commandName(argv);
      return timed(
        (ms) => {
          tally.commands.push({ name, ms });
          tally.runMs += ms;
        },
        () => sandbox.run(argv, options),
      );
    },
    writeFile: (path, data, options) => sandbox.writeFile(path, data, options),
    makePrivateDir: () => sandbox.makePrivateDir(),
    removePrivateDir: (path) => sandbox.removePrivateDir(path),
    ...(sandbox.sweepPrivateDirs ? { sweepPrivateDirs: () => sandbox.sweepPrivateDirs!() } : {}),
    ...(sandbox.allowEgress
      ? {
          allowEgress: (hosts: readonly string[], signal: AbortSignal) =>
            timed(
              (ms) => (tally.egressMs += ms),
              () => sandbox.allowEgress!(hosts, signal),
            ),
        }
      : {}),
  };
}

/**
 * `git fetch` for `git -c a=b --git-dir=… fetch …`, and for the same behind the engine's
 * pack cap (`prlimit --fsize=N -- sh -c '…' git …`); the program's name otherwise.
 */
function commandName(argv: readonly string[]): string {
  const program = argv[0]?.split('/').pop() ?? '';
  if (program === 'prlimit' && argv.includes('--')) {
    let rest = argv.slice(argv.indexOf('--') + 1);
    if (rest[0]?.split('/').pop() === 'sh' && rest[1] === '-c') rest = rest.slice(3);
    return `${commandName(rest)} (capped)`;
  }
  if (program !== 'git') return program;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-c' || arg === '-C') i++;
    else if (!arg.startsWith('-')) return `git ${arg}`;
  }
  return 'git';
}

/** `git fetch ×2, git cat-file ×1` in first-seen order. */
function summarize(commands: Tally['commands']): string {
  const counts = new Map<string, number[]>();
  for (const { name, ms } of commands) counts.set(name, [...(counts.get(name) ?? []), ms]);
  return (
    [...counts].map(([name, ms]) => `${name} x${ms.length} (${ms.map((v) => v.toFixed(0)).join('+')} ms)`).join(', ') ||
    'none'
  );
}

const work = await tempDir('agentproto-bench-skill-sandbox-');
let server: GitHttpServer | undefined;
try {
  // Built in a child process: a host holds no such heap, and every spawn (a fork of this
  // process) costs more the more memory it maps (see skill-repo.child.ts).
  const reposRoot = join(work.path, 'repos');
  const child = spawnSync(process.execPath, [...process.execArgv, CHILD, '20k', reposRoot], { stdio: 'inherit' });
  if (child.status !== 0) throw new Error(`building the repository failed (${child.signal ?? child.status})`);
  server = await startGitHttpServer({ root: reposRoot });
  const declaration = [
    {
      provider: 'git',
      source: server.urlFor('skills.git'),
      version: 'main',
      path: SKILL_DIR,
      name: skillRepoName(TARGET),
    },
  ];

  let failures = 0;
  const filesIn = async (dir: string) =>
    (await readdir(dir, { recursive: true, withFileTypes: true })).filter((d) => d.isFile()).length;

  type Side = { ms: number[]; tallies: Tally[]; requests: number[]; bytes: number[] };
  const bubblewrap: Side = { ms: [], tallies: [], requests: [], bytes: [] };
  const local: Side = { ms: [], tallies: [], requests: [], bytes: [] };
  const localGit: Side = { ms: [], tallies: [], requests: [], bytes: [] };
  const srv = server;
  /** One cold preparation into a fresh store, the sandbox made (and closed) inside the timed part. */
  const cold = async (side: Side, kind: 'bubblewrap' | 'local' | 'local-git', round: number) => {
    const cache = await openContentStore({ root: join(work.path, `store-${kind}-${round}`) });
    const tally: Tally = { commands: [], runMs: 0, egressMs: 0 };
    srv.resetStats();
    const start = performance.now();
    const isolated = kind === 'bubblewrap' ? bubblewrapSandbox({ privateRoot: cache.privateRoot }) : undefined;
    const plain = localSandbox({ privateRoot: cache.privateRoot });
    // localSandbox without `inProcess`: git for every step (the listing and the fetches
    // with their HTTP helpers), the very commands the bubblewrap sandbox runs.
    const sandbox =
      isolated ??
      (kind === 'local-git' ? { ...plain, capabilities: { ...plain.capabilities, inProcess: false } } : plain);
    let skills: Awaited<ReturnType<typeof prepareSkills>>;
    try {
      skills = await prepareSkills(declaration, { cache, sandbox: counted(sandbox, tally) });
    } finally {
      await isolated?.close();
    }
    const ms = performance.now() - start;
    side.requests.push(srv.stats.requests);
    side.bytes.push(srv.stats.bytesServed);
    const [skill] = skills;
    if (skill?.hit !== false || (await filesIn(skill.dir)) !== FILES_PER_SKILL) {
      failures += 1;
      console.error(`CHECK FAILED: ${kind} round ${round}: expected a fetch of ${FILES_PER_SKILL} files`);
    }
    if (round === 0) console.log(`  ${kind}, round 0: ${tally.commands.length} commands: ${summarize(tally.commands)}`);
    side.ms.push(ms);
    side.tallies.push(tally);
    await rm(cache.root, { recursive: true, force: true });
  };

  console.log(
    `cold: ${ROUNDS} rounds each, alternating (order flips every round); skill ${SKILL_DIR} (${FILES_PER_SKILL} files)`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await cold(bubblewrap, 'bubblewrap', round);
      await cold(localGit, 'local-git', round);
      await cold(local, 'local', round);
    } else {
      await cold(local, 'local', round);
      await cold(localGit, 'local-git', round);
      await cold(bubblewrap, 'bubblewrap', round);
    }
  }

  const ours = median(bubblewrap.ms);
  const base = median(local.ms);
  // The cost of isolation: the same git commands, run in bubblewrap or on this machine.
  report(
    'cold preparation, bubblewrapSandbox() vs localSandbox() running git for every step (median ms)',
    ours,
    median(localGit.ms),
    'ms',
    `<= ${TARGET_RATIO}`,
  );
  // And against the default localSandbox, which speaks HTTP in-process (no git fetch at all).
  report('cold preparation, bubblewrapSandbox() vs localSandbox() (median ms)', ours, base, 'ms', 'none: a reference');
  console.log(
    `  per-round ms: bubblewrap ${bubblewrap.ms.map((v) => v.toFixed(0)).join(' ')}; local, git for every step ${localGit.ms.map((v) => v.toFixed(0)).join(' ')}; local ${local.ms.map((v) => v.toFixed(0)).join(' ')}`,
  );
  console.log(
    `  served per preparation (median): bubblewrap ${median(bubblewrap.requests)} requests, ${(median(bubblewrap.bytes) / 1024).toFixed(1)} KiB; ` +
      `local ${median(local.requests)} requests, ${(median(local.bytes) / 1024).toFixed(1)} KiB`,
  );
  const ratios = bubblewrap.ms.map((v, i) => v / localGit.ms[i]!);
  console.log(`  per-round ratios: ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(3)}`);
  for (const [kind, side] of [
    ['bubblewrap', bubblewrap],
    ['local, git for every step', localGit],
    ['local', local],
  ] as const) {
    const runs = median(side.tallies.map((t) => t.commands.length));
    const perRun = median(side.tallies.map((t) => t.runMs / Math.max(1, t.commands.length)));
    console.log(
      `  ${kind}: ${runs} commands per preparation (median), ${median(side.tallies.map((t) => t.runMs)).toFixed(0)} ms in them ` +
        `(${perRun.toFixed(1)} ms each), ${median(side.tallies.map((t) => t.egressMs)).toFixed(1)} ms granting egress, ` +
        `${median(side.ms.map((ms, i) => ms - side.tallies[i]!.runMs - side.tallies[i]!.egressMs)).toFixed(0)} ms elsewhere`,
    );
  }
  for (const [kind, side] of [
    ['bubblewrap', bubblewrap],
    ['local, git for every step', localGit],
    ['local', local],
  ] as const) {
    const byName = new Map<string, number[]>();
    for (const { name, ms } of side.tallies.flatMap((t) => t.commands))
      byName.set(name, [...(byName.get(name) ?? []), ms]);
    console.log(
      `  ${kind}, median ms per command: ${[...byName].map(([name, ms]) => `${name} ${median(ms).toFixed(0)}`).join(', ')}`,
    );
  }

  // --- Where a command's time goes: one command through each sandbox, alternating.
  const privateRoot = join(work.path, 'private-one');
  const url = server.urlFor('skills.git');
  const gitEnv = {
    PATH: '/usr/bin:/bin',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
  };
  const one = async (sandbox: Sandbox, argv: readonly string[], cwd?: string) => {
    const start = performance.now();
    const result = await sandbox.run(argv, { env: gitEnv, ...(cwd === undefined ? {} : { cwd }) });
    if (result.code !== 0) throw new Error(`${argv.join(' ')} exited ${result.code}: ${result.stderr}`);
    return performance.now() - start;
  };
  const plain = localSandbox({ privateRoot });
  const sandbox = bubblewrapSandbox({ privateRoot });
  try {
    const entry = await sandbox.makePrivateDir();
    await sandbox.allowEgress([new URL(url).host], new AbortController().signal);
    const version = ['git', '--version'];
    const listing = ['git', '-c', 'protocol.version=2', 'ls-remote', url];
    // In the entry's sandbox: working in its private folder. Alone: a sandbox for the one
    // command (no network for --version; the egress bridge for the listing).
    const cases: [string, () => Promise<number>][] = [
      ['git --version: localSandbox', () => one(plain, version)],
      ["bubblewrapSandbox, in an entry's sandbox", () => one(sandbox, version, entry)],
      ['alone', () => one(sandbox, version)],
      ['git ls-remote: localSandbox', () => one(plain, listing)],
      ["bubblewrapSandbox, in an entry's sandbox", () => one(sandbox, listing, entry)],
      ['alone', () => one(sandbox, listing)],
    ];
    const samples = cases.map(() => [] as number[]);
    for (let round = -1; round < ROUNDS * 3; round++) {
      for (const [index, [, body]] of cases.entries()) {
        const ms = await body();
        if (round >= 0) samples[index]!.push(ms);
      }
    }
    console.log(
      `one command (median ms of ${ROUNDS * 3}): ${cases.map(([name], i) => `${name} ${median(samples[i]!).toFixed(1)}`).join('; ')}`,
    );
  } finally {
    await sandbox.close();
  }

  const gitBase = median(localGit.ms);
  const ratio = ours / gitBase;
  console.log(
    `summary cold: bubblewrap ${ours.toFixed(0)} ms vs local running git for every step ${gitBase.toFixed(0)} ms: ${ratio.toFixed(3)}x ` +
      `(target <= ${TARGET_RATIO}, ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'}); commands ${median(bubblewrap.tallies.map((t) => t.commands.length))} vs ${median(localGit.tallies.map((t) => t.commands.length))}; ` +
      `default local (HTTP in-process) ${base.toFixed(0)} ms, ${(ours / base).toFixed(3)}x, ${median(local.tallies.map((t) => t.commands.length))} commands`,
  );
  if (failures > 0) process.exitCode = 1;
} finally {
  await server?.close();
  await work.cleanup();
}
