/**
 * Agent Plugins benchmarks, on one package of 500 skills (SKILL.md, a reference and an
 * executable script each, 1-4 KiB per file) and 100 MCP servers (60 stdio `npx`, 40 remote
 * streamable-http), built once per run from a content root generated in a temp folder.
 *  1. validatePlugin on the written package against reading every file of it once and
 *     SHA-256-ing it (readdir recursive, readFile, createHash), in the same run, alternating.
 *     Target ratio <= 1.5.
 *  2. buildPlugin from the content root + writePlugin into a fresh folder, against writing
 *     the package's files (the same bytes and modes, from memory) into a fresh folder:
 *     mkdir once per folder, writeFile, chmod. Target ratio <= 2.0.
 *
 * Both sides of each comparison run one operation at a time (the library awaits every file
 * in turn, so does the baseline), the order of the two sides flips every round, and one
 * untimed round of each warms the JIT and the page cache. For the writes, each side gets a
 * fresh folder per round, `sync` before it (so neither pays for the other's writeback) and
 * the folder's removal after; none of that is timed.
 *
 * BENCH_CASES=validate (or write) runs one comparison alone, e.g. under `node --cpu-prof`.
 */
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  type PackageFile,
  type PluginConfig,
  buildPlugin,
  validatePlugin,
  writePlugin,
} from '@agentproto/agent-plugins';
import { flushPageCache, median, report, textContent, time, xorshift } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CASES = new Set((process.env.BENCH_CASES ?? 'validate,write').split(','));
const SKILLS = 500;
const STDIO_SERVERS = 60;
const HTTP_SERVERS = 40;
const SPEC = '1.0.0' as const;
const skillName = (index: number) => `skill-${String(index).padStart(4, '0')}`;

const text = (id: number, size: number, head = '') => textContent('agentproto-bench-agent-plugins', id, size, head);

/** The content root: skills/<name>/{SKILL.md, references/guide.md, scripts/run.sh (0755)}. */
async function writeContentRoot(root: string): Promise<{ files: number; bytes: number }> {
  const next = xorshift(2026);
  const size = () => 1024 + (next() % (3 * 1024 + 1));
  let id = 0;
  let files = 0;
  let bytes = 0;
  for (let s = 0; s < SKILLS; s++) {
    const name = skillName(s);
    const dir = join(root, 'skills', name);
    await mkdir(join(dir, 'references'), { recursive: true });
    await mkdir(join(dir, 'scripts'), { recursive: true });
    const own: [string, Buffer, number][] = [
      [
        'SKILL.md',
        text(
          id++,
          size(),
          `---\nname: ${name}\ndescription: Benchmark skill ${s}; see references/guide.md and scripts/run.sh.\n---\n\n# ${name}\n\n`,
        ),
        0o644,
      ],
      ['references/guide.md', text(id++, size(), `# Guide for ${name}\n\n`), 0o644],
      ['scripts/run.sh', text(id++, size(), `#!/bin/sh\n# ${name}\n: '\n`), 0o755],
    ];
    for (const [path, data, mode] of own) {
      await writeFile(join(dir, path), data);
      await chmod(join(dir, path), mode);
      files += 1;
      bytes += data.length;
    }
  }
  return { files, bytes };
}

function pluginConfig(): PluginConfig {
  const mcp: NonNullable<PluginConfig['mcp']> = [];
  for (let i = 0; i < STDIO_SERVERS; i++)
    mcp.push({
      name: `stdio-${String(i).padStart(3, '0')}`,
      command: 'npx',
      args: ['-y', `@bench/mcp-server-${i}`, '--stdio'],
    });
  for (let i = 0; i < HTTP_SERVERS; i++)
    mcp.push({
      name: `http-${String(i).padStart(3, '0')}`,
      transport: 'http',
      url: `https://mcp-${i}.example.com/mcp`,
    });
  return {
    name: 'bench.agent-plugins',
    version: '1.0.0',
    description: 'Benchmark package: 500 skills, 100 MCP servers',
    mcp,
  };
}

/** Baseline 1: every file of the package read once and hashed. */
async function hashEveryFile(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  let count = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const data = await readFile(join(entry.parentPath, entry.name));
    createHash('sha256').update(data).digest();
    count += 1;
  }
  return count;
}

/** Baseline 2: the package's files written from memory into `dir`, each folder made once. */
async function writePlainly(files: ReadonlyMap<string, PackageFile>, dir: string): Promise<void> {
  const made = new Set<string>();
  for (const [path, file] of files) {
    const abs = join(dir, ...path.split('/'));
    const folder = dirname(abs);
    if (!made.has(folder)) {
      await mkdir(folder, { recursive: true });
      made.add(folder);
    }
    await writeFile(abs, file.bytes);
    await chmod(abs, file.mode);
  }
}

const ms = (values: number[]) => values.map((v) => v.toFixed(0)).join(' ');
const pairedRatios = (ours: number[], base: number[]) => {
  const ratios = ours.map((v, i) => v / base[i]!);
  return `${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(3)}`;
};

let failures = 0;
const check = (ok: boolean, message: string) => {
  if (!ok) {
    failures += 1;
    console.error(`CHECK FAILED: ${message}`);
  }
};

/** Alternates `a` and `b` for ROUNDS rounds (the order flips every round) after one untimed round of each. */
async function alternate(
  a: (round: number) => Promise<number>,
  b: (round: number) => Promise<number>,
): Promise<{ a: number[]; b: number[] }> {
  await a(-1);
  await b(-1);
  const out = { a: [] as number[], b: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      out.a.push(await a(round));
      out.b.push(await b(round));
    } else {
      out.b.push(await b(round));
      out.a.push(await a(round));
    }
  }
  return out;
}

const work = await mkdtemp(join(tmpdir(), 'agentproto-bench-plugins-'));
try {
  // --- The package, built once.
  const contentRoot = join(work, 'content');
  const config = pluginConfig();
  const started = performance.now();
  const source = await writeContentRoot(contentRoot);
  const generated = performance.now();
  const built = await buildPlugin(config, { contentRoot, spec: SPEC });
  const pkgDir = join(work, 'package');
  await writePlugin(built.files, pkgDir);
  const written = performance.now();
  const packageBytes = [...built.files.values()].reduce((n, f) => n + f.bytes.length, 0);
  const executables = [...built.files.values()].filter((f) => f.mode === 0o755).length;
  console.log(
    `content root: ${source.files} files, ${(source.bytes / 1024).toFixed(0)} KiB (${((generated - started) / 1000).toFixed(2)} s); ` +
      `package: ${built.files.size} files, ${(packageBytes / 1024).toFixed(0)} KiB, ${executables} executable, built and written in ${((written - generated) / 1000).toFixed(2)} s; ` +
      `temp folder ${tmpdir()}; ${ROUNDS} rounds, alternating`,
  );
  const buildErrors = built.findings.filter((f) => f.severity === 'error');
  check(
    !built.rejected && buildErrors.length === 0,
    `build: rejected=${built.rejected}, ${buildErrors.length} error finding(s): ${buildErrors
      .slice(0, 3)
      .map((f) => f.code)
      .join(', ')}`,
  );
  check(
    built.files.size === SKILLS * 3 + 3,
    `build: ${built.files.size} files, expected ${SKILLS * 3 + 3} (skills, plugin.json, mcp.json, sidecar)`,
  );

  const verdict = await validatePlugin(pkgDir);
  const errors = verdict.findings.filter((f) => f.severity === 'error');
  console.log(
    `validatePlugin: ${verdict.skills.length} skills, ${verdict.servers.length} servers, ${verdict.findings.length} finding(s), ${errors.length} error(s), rejected ${verdict.rejected}`,
  );
  check(verdict.skills.length === SKILLS, `validate: ${verdict.skills.length} skills, expected ${SKILLS}`);
  check(
    verdict.servers.length === STDIO_SERVERS + HTTP_SERVERS,
    `validate: ${verdict.servers.length} servers, expected ${STDIO_SERVERS + HTTP_SERVERS}`,
  );
  check(
    !verdict.rejected && !verdict.mcpDisabled && errors.length === 0,
    `validate: rejected=${verdict.rejected}, mcpDisabled=${verdict.mcpDisabled}, ${errors.length} error finding(s)`,
  );

  // --- 1. validatePlugin against reading and hashing every file.
  if (CASES.has('validate')) await compareValidate();
  async function compareValidate(): Promise<void> {
    const validated = await alternate(
      async (round) => {
        let result!: Awaited<ReturnType<typeof validatePlugin>>;
        const t = await time(async () => {
          result = await validatePlugin(pkgDir);
        });
        check(
          result.skills.length === SKILLS && result.servers.length === STDIO_SERVERS + HTTP_SERVERS,
          `validate round ${round}: ${result.skills.length} skills, ${result.servers.length} servers`,
        );
        return t;
      },
      async (round) => {
        let count = 0;
        const t = await time(async () => {
          count = await hashEveryFile(pkgDir);
        });
        check(count === built.files.size, `hash round ${round}: ${count} files, expected ${built.files.size}`);
        return t;
      },
    );
    const validateRatio = median(validated.a) / median(validated.b);
    report(
      `validate ${built.files.size} files (${SKILLS} skills, ${STDIO_SERVERS + HTTP_SERVERS} servers) vs read + SHA-256 every file (median ms)`,
      median(validated.a),
      median(validated.b),
      'ms',
      '<= 1.5',
    );
    console.log(`  per-round ms: ours ${ms(validated.a)}; baseline ${ms(validated.b)}`);
    console.log(`  per-round ratios: ${pairedRatios(validated.a, validated.b)}`);
    console.log(
      `summary validate: ours ${median(validated.a).toFixed(0)} ms vs read + SHA-256 ${median(validated.b).toFixed(0)} ms: ` +
        `${validateRatio.toFixed(3)}x (target <= 1.5, ${validateRatio <= 1.5 ? 'met' : 'MISSED'})`,
    );
  }

  // --- 2. buildPlugin + writePlugin against writing the same files from memory.
  if (CASES.has('write')) await compareWrite();
  async function compareWrite(): Promise<void> {
    const phases = { build: [] as number[], write: [] as number[] };
    const wrote = await alternate(
      async (round) => {
        const dir = join(work, `ours-${round}`);
        flushPageCache();
        const t0 = performance.now();
        const pkg = await buildPlugin(config, { contentRoot, spec: SPEC });
        const t1 = performance.now();
        await writePlugin(pkg.files, dir);
        const t2 = performance.now();
        check(pkg.files.size === built.files.size, `build round ${round}: ${pkg.files.size} files`);
        if (round >= 0) {
          phases.build.push(t1 - t0);
          phases.write.push(t2 - t1);
        }
        await rm(dir, { recursive: true, force: true });
        return t2 - t0;
      },
      async (round) => {
        const dir = join(work, `plain-${round}`);
        flushPageCache();
        const t = await time(() => writePlainly(built.files, dir));
        await rm(dir, { recursive: true, force: true });
        return t;
      },
    );
    const writeRatio = median(wrote.a) / median(wrote.b);
    report(
      `build + write ${built.files.size} files vs writing them from memory (mkdir, writeFile, chmod) (median ms)`,
      median(wrote.a),
      median(wrote.b),
      'ms',
      '<= 2.0',
    );
    console.log(`  per-round ms: ours ${ms(wrote.a)}; baseline ${ms(wrote.b)}`);
    console.log(`  per-round ratios: ${pairedRatios(wrote.a, wrote.b)}`);
    console.log(
      `  ours by phase (median ms): buildPlugin ${median(phases.build).toFixed(0)}, writePlugin ${median(phases.write).toFixed(0)}`,
    );
    console.log(
      `summary build+write: ours ${median(wrote.a).toFixed(0)} ms vs plain write ${median(wrote.b).toFixed(0)} ms: ` +
        `${writeRatio.toFixed(3)}x (target <= 2.0, ${writeRatio <= 2.0 ? 'met' : 'MISSED'})`,
    );
  }
  if (failures > 0) process.exitCode = 1;
} finally {
  await rm(work, { recursive: true, force: true });
}
