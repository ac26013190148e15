import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type StoreEntry, type StoreFs, nodeStoreFs, openContentStore } from '@agentproto/content-cache';
import { canonicalKey, keyDigest as keyDigestOf } from '../src/canonical-key.js';
import { storeState } from './support/inspect.js';
import { tempDir } from './support/temp.js';
import { fillWith, keyFor } from './support/trees.js';

/** A store with three keys over two objects, one key record damaged by hand, one dangling link. */
async function populated(fs?: StoreFs) {
  const root = join(await tempDir(), 'store');
  const store = await openContentStore({ root, ...(fs ? { fs } : {}) });
  await store.acquire(keyFor('t1', { a: 1 }, 'v1'), fillWith({ f: 'one' }));
  await store.acquire(keyFor('t1', { a: 1 }, 'v2'), fillWith({ f: 'one' }));
  await store.acquire(keyFor('t2', { b: 2 }), fillWith({ f: 'two' }));
  await writeFile(join(root, 'keys', `${'0'.repeat(64)}.json`), '{"objectId":');
  await symlink(`../objects/${'f'.repeat(64)}/content`, join(root, 'links', 'dangling'));
  return { root, store };
}

async function collect(entries: AsyncIterable<StoreEntry>): Promise<StoreEntry[]> {
  const found: StoreEntry[] = [];
  for await (const entry of entries) found.push(entry);
  return found;
}

describe('a store of any size', () => {
  it('streams through entries() exactly the records list() returns', async () => {
    const { store } = await populated();
    const listing = await store.list();
    const entries = await collect(store.entries());
    expect(listing.objects).toHaveLength(2);
    expect(listing.keys).toHaveLength(3);
    expect(listing.links).toHaveLength(3);
    const byKind = (kind: StoreEntry['kind']) => entries.filter((entry) => entry.kind === kind);
    expect(byKind('object').map((entry) => (entry as { marker: unknown }).marker)).toEqual(
      expect.arrayContaining(listing.objects),
    );
    expect(byKind('object')).toHaveLength(listing.objects.length);
    expect(byKind('key').map(({ kind: _, ...rest }) => rest)).toEqual(expect.arrayContaining(listing.keys));
    expect(byKind('key')).toHaveLength(listing.keys.length);
    expect(byKind('link').map(({ kind: _, ...rest }) => rest)).toEqual(expect.arrayContaining(listing.links));
    expect(byKind('link')).toHaveLength(listing.links.length);
    // list() keeps its order: by file name in each folder.
    const names = listing.links.map((link) => link.name);
    expect(names).toEqual([...names].sort());
    expect(listing.objects.map((o) => o.objectId)).toEqual(listing.objects.map((o) => o.objectId).sort());
  });

  it('list() orders by name whatever the names: digests, equal first digits, and names left by hand', async () => {
    const { root, store } = await populated();
    const hand = [
      'aaaaaaaaaaaa1',
      'aaaaaaaaaaaa0f',
      'aaaaaaaaaaaa0',
      '0',
      'A',
      'ffffffffffffg',
      'fffffffffff',
      'é',
      '~',
    ];
    for (const name of hand) await symlink('nowhere', join(root, 'links', name));
    const names = (await store.list()).links.map((link) => link.name);
    expect(names).toEqual(expect.arrayContaining(hand));
    expect(names).toHaveLength(hand.length + 3);
    expect(names).toEqual([...names].sort());
  });

  it('lists and collects with a filesystem that cannot stream a folder (no opendir)', async () => {
    const { opendir: _, ...withoutOpendir } = nodeStoreFs;
    const { root, store } = await populated(withoutOpendir);
    expect((await store.list()).keys).toHaveLength(3);
    expect(await collect(store.entries())).toHaveLength(8);
    await rm(join(root, 'objects', (await store.list()).objects[0]!.objectId), { recursive: true });
    const report = await store.gc();
    expect(report.removedLinks).toBeGreaterThanOrEqual(2);
    expect(report.removedKeys).toBeGreaterThanOrEqual(2);
    expect(storeState(root).keys).toHaveLength((await store.list()).keys.length);
  });

  it('opening a store reads no folder whole: one entry of each proves it readable', async () => {
    const { root } = await populated();
    const listed: string[] = [];
    const counting: StoreFs = {
      ...nodeStoreFs,
      readdir: ((path: string, ...rest: unknown[]) => {
        listed.push(path);
        return (nodeStoreFs.readdir as (...args: unknown[]) => unknown)(path, ...rest);
      }) as StoreFs['readdir'],
    };
    const store = await openContentStore({ root, fs: counting });
    expect(listed).toEqual([]);
    expect((await store.list()).keys).toHaveLength(3);
    await rm(join(root, 'keys'), { recursive: true });
    await writeFile(join(root, 'keys'), 'not a folder');
    await expect(openContentStore({ root, fs: counting })).rejects.toMatchObject({ code: 'CACHE_ROOT_UNUSABLE' });
  });

  it('judges every record whole: reads that stop short, and records longer than one read, lose no key', async () => {
    const { root } = await populated();
    // A key record of ~12 KiB: longer than the one read a record gets at first.
    const long = keyFor('t3', { paths: Array.from({ length: 600 }, (_, i) => `skills/s${i}`) });
    await (await openContentStore({ root })).acquire(long, fillWith({ f: 'three' }));
    // A filesystem whose reads give 7 bytes at most, as a network filesystem may stop short.
    const reads: number[] = [];
    const short: StoreFs = {
      ...nodeStoreFs,
      readSync: ((fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
        reads.push(length);
        return nodeStoreFs.readSync(fd, buffer, offset, Math.min(length, 7), position);
      }) as StoreFs['readSync'],
    };
    const store = await openContentStore({ root, fs: short });
    const listing = await store.list();
    expect(reads.length).toBeGreaterThan(0);
    expect(listing.keys).toHaveLength(4);
    expect(listing.keys.map((entry) => entry.key)).toContainEqual(long);
    expect(listing.objects).toHaveLength(3);
    expect(await collect(store.entries())).toHaveLength(4 + 3 + 4);
    const fresh = await openContentStore({ root, fs: short });
    for (const key of [long, keyFor('t1', { a: 1 }, 'v2'), keyFor('t2', { b: 2 })])
      expect((await fresh.acquire(key, () => Promise.reject(new Error('a stored key must not fill')))).fromCache).toBe(
        true,
      );
    // gc removes the damaged record alone.
    const report = await store.gc();
    expect(report.removedKeys).toBe(1);
    expect(report.removedObjects).toEqual([]);
    expect(storeState(root).keys).toHaveLength(4);
  });

  it('lets the event loop run while list, entries and gc read folders of thousands of records', async () => {
    const { root } = await populated();
    // 2,000 more objects (bare folders) and a key record reaching each.
    for (let i = 0; i < 2000; i++) {
      const objectId = createHash('sha256').update(`object ${i}`).digest('hex');
      await mkdir(join(root, 'objects', objectId));
      const text = canonicalKey(keyFor(`c${i}`, { i }));
      const digest = createHash('sha256').update(text).digest('hex');
      await writeFile(join(root, 'keys', `${digest}.json`), `{"objectId":"${objectId}","key":${text}}\n`);
    }
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    // The turns seen while each folder was being read, from its first name to its last.
    const seen = new Map<string, number[]>();
    const watching: StoreFs = {
      ...nodeStoreFs,
      opendir: (async (path: string, options?: object) => {
        const dir = await nodeStoreFs.opendir!(path, options);
        const folder = basename(path);
        const readSync = dir.readSync.bind(dir);
        return Object.assign(dir, {
          readSync: () => {
            if (!seen.has(folder)) seen.set(folder, []);
            seen.get(folder)!.push(turns);
            return readSync();
          },
        });
      }) as StoreFs['opendir'],
    };
    const store = await openContentStore({ root, fs: watching });
    const turnsWhile = async (run: () => Promise<unknown>) => {
      seen.clear();
      await run();
      return Object.fromEntries([...seen].map(([folder, at]) => [folder, Math.max(...at) - Math.min(...at)]));
    };
    setImmediate(tick);
    // 2,000 records take four slices of 512 at least: the loop turned between them.
    for (const run of [() => store.list(), () => collect(store.entries()), () => store.gc()]) {
      const spans = await turnsWhile(run);
      expect(spans.objects).toBeGreaterThanOrEqual(3);
      expect(spans.keys).toBeGreaterThanOrEqual(3);
    }
    ticking = false;
    expect((await store.list()).keys).toHaveLength(2003);
  });

  /** `populated`, plus `count` key records whose object is gone, and links whose object is gone. */
  async function withGarbage(count: number, fs: StoreFs) {
    const { root } = await populated();
    for (let i = 0; i < count; i++) {
      const text = canonicalKey(keyFor(`gone${i}`, { i }));
      const digest = createHash('sha256').update(text).digest('hex');
      await writeFile(join(root, 'keys', `${digest}.json`), `{"objectId":"${'e'.repeat(64)}","key":${text}}\n`);
      await symlink(`../objects/${'e'.repeat(64)}/content`, join(root, 'links', `gone${i}`));
    }
    return { root, store: await openContentStore({ root, fs }) };
  }

  /**
   * A filesystem whose `rm` of a record takes `ms` milliseconds, counting how many run at
   * once; one that `fail` picks fails at once.
   */
  function slowRemovals(ms: number, fail?: (path: string) => boolean) {
    const removals = { running: 0, most: 0, done: 0, runningAtEnd: -1 };
    const fs: StoreFs = {
      ...nodeStoreFs,
      rm: (async (path: string, options?: object) => {
        removals.running += 1;
        removals.most = Math.max(removals.most, removals.running);
        try {
          if (fail?.(path)) throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
          await new Promise((resolve) => setTimeout(resolve, ms));
          await nodeStoreFs.rm(path, options);
          removals.done += 1;
        } finally {
          removals.running -= 1;
        }
      }) as StoreFs['rm'],
    };
    return { fs, removals };
  }

  it('gc removes a few records at once while it goes on reading, and reports each removal once', async () => {
    const { fs, removals } = slowRemovals(3);
    const { root, store } = await withGarbage(60, fs);
    const report = await store.gc();
    // The damaged record and the 60 keys; the dangling link and the 60 links.
    expect(report.removedKeys).toBe(61);
    expect(report.removedLinks).toBe(61);
    expect(removals.most).toBeGreaterThan(1);
    expect(removals.most).toBeLessThanOrEqual(4);
    expect(removals.running).toBe(0);
    expect(storeState(root).keys).toHaveLength(3);
    expect((await store.list()).links).toHaveLength(2);
    // Objects nothing reaches any more, moved a few at once too, in the report in id order.
    for (const { key } of (await store.list()).keys) await rm(join(root, 'keys', `${keyDigestOf(key)}.json`));
    await rm(join(root, 'links'), { recursive: true });
    await mkdir(join(root, 'links'));
    const objects = (await store.list()).objects.map((object) => object.objectId);
    const second = await store.gc();
    expect(second.removedObjects).toEqual([...objects].sort());
    expect((await store.list()).objects).toEqual([]);
  });

  it('a removal that fails ends gc with CACHE_IO only once no other removal is still running', async () => {
    // The fourth key removal fails while the three before it are still running.
    let keyRemovals = 0;
    const { fs, removals } = slowRemovals(50, (path) => path.includes(join('keys', '')) && ++keyRemovals === 4);
    const { root, store } = await withGarbage(40, fs);
    const refused = await store.gc().catch((error: unknown) => {
      removals.runningAtEnd = removals.running;
      return error;
    });
    expect(refused).toMatchObject({ code: 'CACHE_IO' });
    expect(removals.runningAtEnd).toBe(0);
    expect(storeState(root).keys.length).toBeGreaterThan(3);
    // The lock was let go after them: the next gc takes it and removes the rest.
    await store.gc();
    expect(storeState(root).keys).toHaveLength(3);
    expect((await store.list()).links).toHaveLength(2);
  });

  it('an unreadable folder fails entries() with CACHE_IO naming it', async () => {
    const { root, store } = await populated();
    await rm(join(root, 'keys'), { recursive: true });
    await writeFile(join(root, 'keys'), 'not a folder');
    await expect(collect(store.entries())).rejects.toMatchObject({ code: 'CACHE_IO', path: join(root, 'keys') });
    await rm(join(root, 'keys'));
    await mkdir(join(root, 'keys'));
  });
});
