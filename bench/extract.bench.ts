/**
 * Safe extraction against GNU tar. One archive of a 10,000-file, ~100 MiB source-like tree
 * (the workspace of aip-26.bench.ts), made once with `tar -czf`; then rounds alternate
 * `extractTarGz` (every rule of the safe reader, staging folder and rename) and `tar -xzf`
 * (a child process, start-up included), each into a fresh folder on the same filesystem.
 * Target: ratio of medians <= 1.2. Each run starts after a `sync`, so neither pays for the
 * writeback of the tree the one before it wrote (or removed). BENCH_DIR picks the filesystem
 * (default: the OS temp folder); on a disk shared with other work the figures still follow
 * its load, on tmpfs (BENCH_DIR=/dev/shm) they measure the extractors themselves.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractTarGz } from '@agentproto/aip-26';
import { childrenCpuMs, flushPageCache, median, sourceLikeFiles, time, writeFiles } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const FILES = Number(process.env.BENCH_FILES ?? 10_000);
const TARGET = 1.2;

const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'agentproto-bench-extract-'));
try {
  const workspaceRoot = join(work, 'workspace');
  const total = await writeFiles(workspaceRoot, sourceLikeFiles(FILES));
  const archive = join(work, 'workspace.tar.gz');
  execFileSync('tar', ['--sort=name', '-czf', archive, '-C', workspaceRoot, 'src']);
  const archiveBytes = (await stat(archive)).size;
  console.log(
    `archive: ${FILES} files, ${(total / 2 ** 20).toFixed(1)} MiB, ${(archiveBytes / 2 ** 20).toFixed(1)} MiB gzipped; ${ROUNDS} rounds, alternating, in ${work}`,
  );

  const options = { maxBytes: 4 * total + (FILES + 100) * 1024, maxFiles: FILES };
  const ours: number[] = [];
  const gnu: number[] = [];
  // CPU time as well (every thread of this process; tar and its gzip child through the
  // shell's `times`): on a machine busy with other work it is steadier than wall time.
  const oursCpu: number[] = [];
  const gnuCpu: number[] = [];
  // One round of each first, not counted: the parser's first load, the JIT, the page cache.
  for (let round = -1; round < ROUNDS; round++) {
    const oursDest = join(work, `ours-${round + 1}`);
    const gnuDest = join(work, `gnu-${round + 1}`);
    const runOurs = async () => {
      flushPageCache();
      const cpu = process.cpuUsage();
      const ms = await time(() => extractTarGz(createReadStream(archive), oursDest, options));
      const used = process.cpuUsage(cpu);
      if (round >= 0) {
        ours.push(ms);
        oursCpu.push((used.user + used.system) / 1000);
      }
      await rm(oursDest, { recursive: true, force: true });
    };
    const runGnu = async () => {
      await mkdir(gnuDest);
      flushPageCache();
      let times = '';
      const ms = await time(async () => {
        // `times` prints the shell's own CPU, then its children's (tar, which waited for gzip).
        times = execFileSync('sh', ['-c', 'tar -xzf "$0" -C "$1" && times', archive, gnuDest], { encoding: 'utf8' });
      });
      if (round >= 0) {
        gnu.push(ms);
        gnuCpu.push(childrenCpuMs(times));
      }
      await rm(gnuDest, { recursive: true, force: true });
    };
    // Alternate which goes first, so neither always runs on the other's warm caches.
    if (round % 2 !== 0) {
      await runOurs();
      await runGnu();
    } else {
      await runGnu();
      await runOurs();
    }
  }
  const ratio = median(ours) / median(gnu);
  const spread = (values: number[]) => `${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}`;
  console.log(`  per-round ratios: ${ours.map((o, i) => (o / gnu[i]!).toFixed(2)).join(' ')}`);
  console.log(
    `  cpu (user+sys): extractTarGz ${median(oursCpu).toFixed(0)} ms (${spread(oursCpu)}) vs tar -xzf ${median(gnuCpu).toFixed(0)} ms (${spread(gnuCpu)}): ` +
      `${(median(oursCpu) / median(gnuCpu)).toFixed(3)}x`,
  );
  console.log(
    `summary extract: extractTarGz ${median(ours).toFixed(0)} ms (${spread(ours)}) vs tar -xzf ${median(gnu).toFixed(0)} ms (${spread(gnu)}): ` +
      `${ratio.toFixed(3)}x (target <= ${TARGET}, ${ratio <= TARGET ? 'met' : 'MISSED'})`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
