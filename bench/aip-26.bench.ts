/**
 * AIP-26 benchmarks.
 *  1. defineCode on a 10,000-file, ~100 MiB workspace against
 *     `tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -czf` on the same tree,
 *     in the same run. Target wall ratio <= 1.0; memory above the process baseline <= the
 *     compressed bundle + 64 MiB.
 *  2. A second defineCode with a SHA-pinned github source: zero requests to the git server
 *     (counted by the testkit server) and <= 5% of the cold time.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { defineCodeWithReport, githubConnector } from '@agentproto/aip-26';
import { openContentStore } from '@agentproto/content-cache';
import { makeRepo, startGitHttpServer } from '@agentproto/testkit';
import { median, time, xorshift } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** Source-like files: words from a small vocabulary with some random tokens, 1-20 KiB each. */
function workspaceFiles(count: number, seed = 3): Map<string, Buffer> {
  const next = xorshift(seed);
  const words =
    'const let function return import export from await async class extends new this if else for while of in true false null undefined string number object'.split(
      ' ',
    );
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    const size = 1024 + (next() % (18 * 1024));
    const parts: string[] = [];
    let length = 0;
    while (length < size) {
      const word = next() % 7 === 0 ? next().toString(36) : words[next() % words.length]!;
      parts.push(word);
      length += word.length + 1;
    }
    files.set(
      `src/m${String(i % 40).padStart(2, '0')}/f${String(i).padStart(5, '0')}.ts`,
      Buffer.from(parts.join(' ').slice(0, size)),
    );
  }
  return files;
}

const work = await mkdtemp(join(tmpdir(), 'agentproto-bench-aip26-'));
try {
  const workspaceRoot = join(work, 'workspace');
  const files = workspaceFiles(10_000);
  for (const [path, data] of files) {
    await mkdir(dirname(join(workspaceRoot, path)), { recursive: true });
    await writeFile(join(workspaceRoot, path), data);
  }
  const total = [...files.values()].reduce((n, b) => n + b.length, 0);
  files.clear();
  console.log(`workspace: 10,000 files, ${(total / 2 ** 20).toFixed(1)} MiB; ${ROUNDS} rounds, alternating`);

  const ours: number[] = [];
  const gnu: number[] = [];
  const memory: number[] = [];
  let compressed = 0;
  const child = fileURLToPath(new URL('./aip-26-define-code.child.ts', import.meta.url));
  for (let round = 0; round < ROUNDS; round++) {
    gnu.push(
      await time(async () => {
        execFileSync('tar', [
          '--sort=name',
          '--mtime=@0',
          '--owner=0',
          '--group=0',
          '--numeric-owner',
          '-czf',
          join(work, 'gnu.tar.gz'),
          '-C',
          workspaceRoot,
          'src',
        ]);
      }),
    );
    // defineCode in a fresh process: its peak memory is measured against that process's own baseline.
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--conditions=@agentproto/source', '--import', 'tsx', child, workspaceRoot],
      { encoding: 'utf8' },
    );
    const measured = JSON.parse(out) as { ms: number; bundleBytes: number; peakAboveMiB: number };
    ours.push(measured.ms);
    memory.push(measured.peakAboveMiB);
    compressed = measured.bundleBytes;
  }
  const ratio = median(ours) / median(gnu);
  console.log(
    `defineCode vs GNU tar -czf (median ms): ours ${median(ours).toFixed(0)}, GNU tar ${median(gnu).toFixed(0)}, ratio ${ratio.toFixed(3)} (target <= 1.0)`,
  );
  console.log(`  per-round ratios: ${ours.map((o, i) => (o / gnu[i]!).toFixed(2)).join(' ')}`);
  console.log(
    `  peak memory above the process baseline: median ${median(memory).toFixed(1)} MiB, max ${Math.max(...memory).toFixed(1)} MiB; budget = bundle ${(compressed / 2 ** 20).toFixed(1)} MiB + 64 MiB = ${(compressed / 2 ** 20 + 64).toFixed(1)} MiB`,
  );

  // 2. A SHA-pinned github source, cold then from the content store.
  const repos = join(work, 'repos');
  const repo = await makeRepo({
    root: repos,
    name: 'acme/shell.git',
    commits: [{ message: 'shell', files: Object.fromEntries([...workspaceFiles(2_000, 9)].map(([p, d]) => [p, d])) }],
  });
  const server = await startGitHttpServer({ root: repos });
  try {
    const code = { sources: [{ github: { repo: 'acme/shell', ref: repo.commits[0]! } }] };
    const cold: number[] = [];
    const warm: number[] = [];
    let warmRequests = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const cache = await openContentStore({ root: join(work, `cache-${round}`) });
      const github = githubConnector({ baseUrl: server.url, cache });
      cold.push(await time(() => defineCodeWithReport({ workspaceRoot, github, code, cache })));
      server.resetStats();
      warm.push(await time(() => defineCodeWithReport({ workspaceRoot, github, code, cache })));
      warmRequests += server.stats.requests;
    }
    console.log(
      `SHA-pinned github source (2,000 files): cold ${median(cold).toFixed(0)} ms, second ${median(warm).toFixed(0)} ms = ${((median(warm) / median(cold)) * 100).toFixed(1)}% of cold (target <= 5%); requests on second runs: ${warmRequests} (target 0)`,
    );
  } finally {
    await server.close();
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
