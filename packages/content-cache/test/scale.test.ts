import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type StoreEntry, type StoreFs, nodeStoreFs, openContentStore } from '@agentproto/content-cache';
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

  it('an unreadable folder fails entries() with CACHE_IO naming it', async () => {
    const { root, store } = await populated();
    await rm(join(root, 'keys'), { recursive: true });
    await writeFile(join(root, 'keys'), 'not a folder');
    await expect(collect(store.entries())).rejects.toMatchObject({ code: 'CACHE_IO', path: join(root, 'keys') });
    await rm(join(root, 'keys'));
    await mkdir(join(root, 'keys'));
  });
});
