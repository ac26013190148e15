/**
 * Scale of one content store: 10,000 objects / 100,000 keys, then 100,000 objects /
 * 1,000,000 keys (ten versions of each declaration resolve to the same content; one
 * declaration link per object). Targets:
 *  1. A hit (acquire of a stored key, in a process that has not seen it yet) stays under
 *     1 ms median at both sizes.
 *  2. `list`, `entries` and `gc` take time linear in the store's size. Each runs right after
 *     the baseline below (a plain read of the records it reads), and its time is taken as a
 *     multiple of that read's, paired round by round; target: that multiple at 1,000,000
 *     keys is at most 1.2x the one at 100,000 (the same, with 20% for the noise of a shared
 *     machine), so nothing the store adds to the reads grows faster than the store. The
 *     plain time ratio of the two sizes is printed too, beside the baseline's own: on this
 *     project's VMs a plain read of 10x the records took 7.4-13.1x the time (the kernel's
 *     lookup of each name slows as the cached names grow), so a bound on it would measure
 *     the filesystem.
 *  3. Memory stays bounded: peak RSS and heap above the process's baseline while `gc` runs
 *     and while `entries` streams the listing; target: under 64 MiB at 1,000,000 keys.
 *     (`list()` returns every record in arrays, so its memory is that of its answer.)
 * The stores are written on disk directly in the store's layout (it takes a few minutes);
 * each measurement runs in a fresh process, so one's heap and caches do not skew the next.
 *
 * The baseline, run just before each `list`, `entries` and `gc`: a plain read of every record
 * they read (markers, key records, links; opendir, readFileSync, readlinkSync), in a fresh
 * process. Its own 1M / 100k ratio is what this machine's filesystem gives for 10x the
 * files, and it leaves both sizes with their records in the page cache. This VM gives back
 * clean page-cache pages while the machine is idle (`fincore` on 10,000 key records: 1% had
 * left the cache 15 s after they were read, 10% after 60 s, 25% after 120 s), so without it
 * an operation on the large store, which comes longer after the previous one read its
 * records, read more of them from disk than one on the small store did: 1M keys took 12-17x
 * the time of 100k, and ~10x once both were read just before.
 * BENCH_STORE_SCALE_DIR keeps the built stores there between runs; BENCH_ROUNDS (default 3)
 * sets the rounds; BENCH_STORE_SCALE_MODULE measures another copy of the package's source
 * (its store.ts, e.g. an earlier commit's, for a before/after); BENCH_STORE_SCALE_TIMEOUT_S
 * (default 1200) stops an operation that takes longer, and reports it as that long.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  opendirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { openContentStore as OpenContentStore } from '@agentproto/content-cache';
import {
  type CacheKey,
  canonicalKey,
  declarationDigest,
  objectIdOf,
  sha256Hex,
} from '../packages/content-cache/src/canonical-key.ts';
import { median } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SIZES = [
  { objects: 10_000, keys: 100_000 },
  { objects: 100_000, keys: 1_000_000 },
];
/** Garbage added before each gc: objects no key reaches and keys whose object is gone. */
const GARBAGE_OBJECTS = 0.01;
const GARBAGE_KEYS = 0.01;
const HITS = 2_000;
const TIMEOUT_S = Number(process.env.BENCH_STORE_SCALE_TIMEOUT_S ?? 1200);
const MIB = 2 ** 20;

const keyOf = (i: number, objects: number): CacheKey => ({
  provider: 'bench',
  declaration: { skill: `s${i % objects}` },
  version: `v${Math.floor(i / objects)}`,
  contentId: `c${i % objects}`,
});

interface Measure {
  ms: number;
  rssMiB: number;
  heapMiB: number;
  detail: string;
}

/** The package's openContentStore, or that of the copy BENCH_STORE_SCALE_MODULE names. */
async function loadOpen(): Promise<typeof OpenContentStore> {
  const module = process.env.BENCH_STORE_SCALE_MODULE ?? '@agentproto/content-cache';
  return ((await import(module)) as { openContentStore: typeof OpenContentStore }).openContentStore;
}

/** In a child: runs one operation on the store at `root` and prints a Measure as JSON. */
async function child(operation: string, root: string, objects: number, keys: number): Promise<void> {
  const store = await (await loadOpen())({ root });
  if (operation === 'entries' && !('entries' in store)) {
    console.log(JSON.stringify({ ms: 0, rssMiB: 0, heapMiB: 0, detail: 'absent' }));
    return;
  }
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sample = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 2);
  let detail = '';
  const start = performance.now();
  if (operation === 'read') {
    detail = `${readEveryRecord(root)} records`;
  } else if (operation === 'list') {
    const listing = await store.list();
    detail = `${listing.objects.length} objects, ${listing.keys.length} keys, ${listing.links.length} links`;
  } else if (operation === 'entries') {
    let counted = 0;
    for await (const _entry of store.entries()) counted += 1;
    detail = `${counted} entries`;
  } else if (operation === 'gc') {
    const report = await store.gc();
    detail = `removed ${report.removedObjects.length} objects, ${report.removedKeys} keys`;
  } else if (operation === 'hit') {
    const times: number[] = [];
    const refuse = async () => {
      throw new Error('a hit must not fill');
    };
    for (let n = 0; n < HITS; n++) {
      const i = (n * 7919 + 13) % keys;
      const t = performance.now();
      await store.acquire(keyOf(i, objects), refuse);
      times.push(performance.now() - t);
    }
    // The same keys again: this process has seen them.
    const again: number[] = [];
    for (let n = 0; n < HITS; n++) {
      const i = (n * 7919 + 13) % keys;
      const t = performance.now();
      await store.acquire(keyOf(i, objects), refuse);
      again.push(performance.now() - t);
    }
    detail = JSON.stringify({ first: median(times), again: median(again) });
  }
  const ms = performance.now() - start;
  clearInterval(sample);
  const measure: Measure = {
    ms,
    rssMiB: (peakRss - base.rss) / MIB,
    heapMiB: (peakHeap - base.heapUsed) / MIB,
    detail,
  };
  console.log(JSON.stringify(measure));
}

/** The baseline: every record list, entries and gc read, read once with plain synchronous calls. */
function readEveryRecord(root: string): number {
  let count = 0;
  const each = (folder: string, read: (path: string) => unknown) => {
    const dir = opendirSync(join(root, folder), { bufferSize: 1024 });
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        read(join(root, folder, entry.name));
        count += 1;
      }
    } finally {
      dir.closeSync();
    }
  };
  each('objects', (path) => readFileSync(join(path, 'COMPLETE.json'), 'utf8'));
  each('keys', (path) => readFileSync(path, 'utf8'));
  each('links', (path) => readlinkSync(path, 'utf8'));
  return count;
}

function runChild(operation: string, root: string, objects: number, keys: number): Measure {
  const result = spawnSync(
    process.execPath,
    [...process.execArgv, process.argv[1]!, '--child', operation, root, String(objects), String(keys)],
    { encoding: 'utf8', maxBuffer: 16 * MIB, timeout: TIMEOUT_S * 1000 },
  );
  if (result.signal === 'SIGTERM')
    return { ms: TIMEOUT_S * 1000, rssMiB: Number.NaN, heapMiB: Number.NaN, detail: `stopped after ${TIMEOUT_S} s` };
  if (result.status !== 0) throw new Error(`${operation} failed: ${result.stderr}`);
  const line = result.stdout.trim().split('\n').at(-1)!;
  return JSON.parse(line) as Measure;
}

function marker(objectId: string, i: number): string {
  return `${JSON.stringify({ format: 1, objectId, provider: 'bench', contentId: `c${i}`, digest: `sha256:${sha256Hex(`c${i}`)}`, files: 1, bytes: 12 })}\n`;
}

function writeObject(root: string, i: number): string {
  const objectId = objectIdOf({ provider: 'bench', contentId: `c${i}` });
  const dir = join(root, 'objects', objectId);
  mkdirSync(join(dir, 'content'), { recursive: true });
  writeFileSync(join(dir, 'content', 'SKILL.md'), `content ${i}\n`.slice(0, 12).padEnd(12));
  writeFileSync(join(dir, 'COMPLETE.json'), marker(objectId, i));
  return objectId;
}

function writeKey(root: string, key: CacheKey, objectId: string): void {
  const text = canonicalKey(key);
  writeFileSync(
    join(root, 'keys', `${sha256Hex(text)}.json`),
    `{"objectId":${JSON.stringify(objectId)},"key":${text}}\n`,
  );
}

/** Writes the store's layout directly: objects with markers, key records, declaration links. */
function build(root: string, objects: number, keys: number): void {
  if (existsSync(join(root, 'built'))) return;
  rmSync(root, { recursive: true, force: true });
  for (const folder of ['objects', 'keys', 'links', 'staging', 'trash', 'quarantine', 'facts'])
    mkdirSync(join(root, folder), { recursive: true });
  const start = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < objects; i++) {
    const objectId = writeObject(root, i);
    ids.push(objectId);
    symlinkSync(`../objects/${objectId}/content`, join(root, 'links', declarationDigest(keyOf(i, objects))));
    if (i % 20_000 === 0) process.stdout.write(`  objects ${i}/${objects}\r`);
  }
  for (let i = 0; i < keys; i++) {
    writeKey(root, keyOf(i, objects), ids[i % objects]!);
    if (i % 50_000 === 0) process.stdout.write(`  keys ${i}/${keys}      \r`);
  }
  writeFileSync(join(root, 'built'), '');
  console.log(`  built ${objects} objects, ${keys} keys in ${((performance.now() - start) / 1000).toFixed(0)} s`);
}

/** Objects nothing reaches and keys naming objects that are gone: what the next gc must remove. */
function addGarbage(root: string, objects: number, keys: number): { objects: number; keys: number } {
  const garbageObjects = Math.round(objects * GARBAGE_OBJECTS);
  const garbageKeys = Math.round(keys * GARBAGE_KEYS);
  const tag = randomBytes(4).toString('hex');
  for (let i = 0; i < garbageObjects; i++) writeObject(root, objects + 1 + i + Number.parseInt(tag, 16) * 1000);
  for (let i = 0; i < garbageKeys; i++) {
    const key = { provider: 'bench', declaration: { gone: `${tag}-${i}` }, version: 'v0', contentId: `gone-${i}` };
    writeKey(root, key, objectIdOf(key));
  }
  return { objects: garbageObjects, keys: garbageKeys };
}

async function main(): Promise<void> {
  const kept = process.env.BENCH_STORE_SCALE_DIR;
  const work = kept ?? (await mkdtemp(join(tmpdir(), 'agentproto-store-scale-')));
  const results: Record<string, { size: number; ms: number[]; rss: number[]; heap: number[]; hit?: number[] }>[] = [];
  try {
    for (const { objects, keys } of SIZES) {
      const root = join(work, `store-${objects}-${keys}`);
      console.log(`store of ${objects} objects, ${keys} keys, ${objects} links (${root})`);
      build(root, objects, keys);
      const probe = await (await (await loadOpen())({ root })).lookup(keyOf(keys - 1, objects));
      if (!probe) throw new Error('the built store does not answer its own key: the layout drifted');
      const byOperation: (typeof results)[number] = {};
      for (let round = 0; round < ROUNDS; round++) {
        for (const operation of ['hit', 'list', 'entries', 'gc']) {
          const garbage = operation === 'gc' ? addGarbage(root, objects, keys) : undefined;
          if (operation !== 'hit') {
            const read = runChild('read', root, objects, keys);
            byOperation[`read ${operation}`] ??= { size: keys, ms: [], rss: [], heap: [] };
            byOperation[`read ${operation}`]!.ms.push(read.ms);
            console.log(
              `  round ${round + 1} baseline read before ${operation}: ${read.ms.toFixed(0)} ms; ${read.detail}`,
            );
          }
          const measure = runChild(operation, root, objects, keys);
          if (
            garbage &&
            !measure.detail.startsWith('stopped') &&
            measure.detail !== `removed ${garbage.objects} objects, ${garbage.keys} keys`
          )
            throw new Error(`gc removed the wrong things: ${measure.detail}, expected ${JSON.stringify(garbage)}`);
          byOperation[operation] ??= { size: keys, ms: [], rss: [], heap: [], hit: [] };
          const entry = byOperation[operation];
          entry.ms.push(measure.ms);
          entry.rss.push(measure.rssMiB);
          entry.heap.push(measure.heapMiB);
          if (operation === 'hit') entry.hit!.push(JSON.parse(measure.detail).first as number);
          console.log(
            `  round ${round + 1} ${operation}: ${measure.ms.toFixed(0)} ms, peak +${measure.rssMiB.toFixed(1)} MiB RSS, +${measure.heapMiB.toFixed(1)} MiB heap; ${measure.detail}`,
          );
        }
      }
      results.push(byOperation);
    }
    const [small, large] = results as [(typeof results)[number], (typeof results)[number]];
    const hits = SIZES.map((_, i) => median(results[i]!.hit!.hit!));
    console.log(
      `summary hit median, first sight in a process: ${hits.map((h) => `${h.toFixed(3)} ms`).join(' at 100k keys, ')} at 1M keys (target < 1 ms, ${hits.every((h) => h < 1) ? 'met' : 'MISSED'})`,
    );
    for (const operation of ['list', 'entries', 'gc']) {
      const a = small[operation]!;
      const b = large[operation]!;
      const ratio = median(b.ms) / median(a.ms);
      const spread = (m: number[]) => `${Math.min(...m).toFixed(0)}-${Math.max(...m).toFixed(0)}`;
      const readA = small[`read ${operation}`]!.ms;
      const readB = large[`read ${operation}`]!.ms;
      // Each operation's time over the baseline read just before it, in the same round.
      const overRead = (ms: number[], read: number[]) => median(ms.map((t, i) => t / read[i]!));
      const multipleA = overRead(a.ms, readA);
      const multipleB = overRead(b.ms, readB);
      const growth = multipleB / multipleA;
      console.log(
        `summary ${operation} time, as a multiple of a plain read of the same records (paired by round): ${multipleA.toFixed(2)} at 100k keys, ${multipleB.toFixed(2)} at 1M keys: ${growth.toFixed(2)}x (target <= 1.2, ${growth <= 1.2 ? 'met' : 'MISSED'}); time 1M keys / 100k keys: ${median(b.ms).toFixed(0)} ms (${spread(b.ms)}) / ${median(a.ms).toFixed(0)} ms (${spread(a.ms)}) = ${ratio.toFixed(2)} for 10x the size, the plain read's ${median(readB).toFixed(0)} ms / ${median(readA).toFixed(0)} ms = ${(median(readB) / median(readA)).toFixed(2)}`,
      );
      const rss = median(b.rss);
      const heap = median(b.heap);
      const bounded = operation === 'list' ? '' : ` (target < 64 MiB, ${rss < 64 && heap < 64 ? 'met' : 'MISSED'})`;
      console.log(
        `summary ${operation} peak memory above baseline: 100k keys +${median(a.rss).toFixed(1)} MiB RSS / +${median(a.heap).toFixed(1)} MiB heap; 1M keys +${rss.toFixed(1)} MiB RSS / +${heap.toFixed(1)} MiB heap${bounded}`,
      );
    }
  } finally {
    if (!kept) await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  const [, , , operation, root, objects, keys] = process.argv;
  await child(operation!, root!, Number(objects), Number(keys));
} else if (process.argv[2] === '--build') {
  // Only builds one store: `--build <root> <objects> <keys>`, to measure with `--child` by hand.
  const [, , , root, objects, keys] = process.argv;
  build(root!, Number(objects), Number(keys));
} else if (process.argv[2] === '--garbage') {
  // Only adds what the next gc must remove: `--garbage <root> <objects> <keys>`.
  const [, , , root, objects, keys] = process.argv;
  console.log(JSON.stringify(addGarbage(root!, Number(objects), Number(keys))));
} else {
  await main();
}
