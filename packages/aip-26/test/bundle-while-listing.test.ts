import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sortInArchiveOrder } from '@agentproto/archive';
import { openContentStore } from '@agentproto/content-cache';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { BundleSizeError, RunFileMissingError, defineCodeWithReport, nodeWorkspaceFs } from '../src/index.js';
import type { BundleEntry } from '../src/tar/bundle-plan.js';
import { readBundleEntries } from '../src/tar/index.js';
import { DeflateLane } from '../src/tar/parallel-gzip.js';
import { OrderedBundleWriter, type SinkFactory, writeBundleDigested } from '../src/tar/write-bundle.js';
import { listNames } from './fixtures/tar/craft.js';
import { makeWorkspace } from './support/workspace.js';

/** The writer fed `entries` in the order given; undefined when it declined them. */
async function written(
  entries: readonly BundleEntry[],
): Promise<{ output: Buffer; sha256: string | undefined } | undefined> {
  const writer = new OrderedBundleWriter();
  for (const entry of entries) writer.add(entry);
  writer.end();
  if (writer.declined) return undefined;
  return writer.result();
}

/** `bytes` bytes that deflate to about their size (a block of them takes a while to compress). */
function noise(bytes: number, seed: number): Buffer {
  const data = Buffer.alloc(bytes);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    data[i] = x >>> 24;
  }
  return data;
}

const text = (path: string, content = `${path}\n`, executable = false): BundleEntry => ({
  path,
  data: Buffer.from(content),
  executable,
});

/** A lazily read entry, as a workspace file is: size first, bytes when the archive reaches it. */
const lazy = (path: string, data: Buffer): BundleEntry => ({
  path,
  size: data.length,
  read: async () => data,
  readInto: async (target) => {
    data.copy(target);
  },
});

describe('OrderedBundleWriter: entries packed as they come, in archive order', () => {
  it('writes the bytes writeBundle writes for the same entries: folders, pax names, blocks, lazy files', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 77);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
    const entries = sortInArchiveOrder(
      [
        text('x/a.txt'),
        text('x-y.txt'),
        text('x.txt'),
        text('bin/run', '#!/bin/sh\n', true),
        text('empty', ''),
        lazy('deep/er/big.bin', big),
        lazy('deep/er/small.js', Buffer.from('export {};\n')),
        text(`long/${'n'.repeat(140)}.md`),
        text('naïve/été.txt'),
      ],
      (entry) => entry.path,
    );
    const streamed = await written(entries);
    const sorted = await writeBundleDigested(entries, {}, true);
    expect(streamed).toBeDefined();
    expect(streamed!.sha256).toBe(sorted.sha256);
    expect(streamed!.output.equals(sorted.bundle)).toBe(true);
    expect(listNames(gunzipSync(streamed!.output)).map((e) => e.name)).toEqual([
      'bin/',
      'bin/run',
      'deep/',
      'deep/er/',
      'deep/er/big.bin',
      'deep/er/small.js',
      'empty',
      'long/',
      `long/${'n'.repeat(140)}.md`,
      'naïve/',
      'naïve/été.txt',
      'x/',
      'x/a.txt',
      'x-y.txt',
      'x.txt',
    ]);
  });

  it('keeps its own copy of what was compressed before the last entry came (the bound unknown till then)', async () => {
    // The first blocks compress while the listing goes on; their chunks are lent by the
    // compressor, whose streams go on with later blocks over them.
    const entries = Array.from({ length: 12 }, (_, i) =>
      lazy(`n/${String(i).padStart(2, '0')}.bin`, noise(1 << 20, i)),
    );
    const writer = new OrderedBundleWriter();
    for (const entry of entries.slice(0, 8)) writer.add(entry);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const entry of entries.slice(8)) writer.add(entry);
    writer.end();
    const sorted = await writeBundleDigested(entries, {}, true);
    const streamed = await writer.result();
    expect(streamed.sha256).toBe(sorted.sha256);
    expect(streamed.output.equals(sorted.bundle)).toBe(true);
  });

  it('an empty bundle is the end-of-archive marker alone, as writeBundle writes it', async () => {
    const streamed = await written([]);
    expect(streamed!.output.equals((await writeBundleDigested([], {}, true)).bundle)).toBe(true);
  });

  it('declines whatever planBundle would sort or refuse: out of order, twice, an invalid path, a file that is a folder', async () => {
    expect(await written([text('b'), text('a')])).toBeUndefined();
    expect(await written([text('x.txt'), text('x/a')])).toBeUndefined(); // "x/" sorts before "x.txt"
    expect(await written([text('a'), text('a')])).toBeUndefined();
    expect(await written([text('a'), text('b//c')])).toBeUndefined();
    expect(await written([text('a'), text('a/b')])).toBeUndefined();
    expect(await written([text('z'), text('\u00e9'), text('\u{1f600}')])).toBeDefined();
    // JavaScript's sort puts U+1F600 (a surrogate pair) before U+E000; UTF-8 puts it after.
    expect(await written([text('\u{1f600}'), text('\ue000')])).toBeUndefined();
  });

  it('matches writeBundle for any set of paths given in archive order, and declines any other order', async () => {
    const segment = fc.constantFrom('a', 'b', 'a-b', 'a.b', 'B', '_', '\u00e9', '\ue000', '\u{1f600}', 'n'.repeat(60));
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(path, { maxLength: 12 }), fc.integer(), async (paths, seed) => {
        // planBundle's refusal of a file that is also a folder is not what this is about.
        const files = paths.filter((p) => !paths.some((q) => q.startsWith(`${p}/`)));
        const entries = files.map((p) => text(p, `${p}:${seed}`));
        const ordered = sortInArchiveOrder(entries, (entry) => entry.path);
        const streamed = await written(ordered);
        expect(streamed!.output.equals((await writeBundleDigested(entries, {}, true)).bundle)).toBe(true);
        const shuffled = [...entries].sort((a, b) => ((a.path.length * seed) % 7) - ((b.path.length * seed) % 7));
        const inOrder = shuffled.every((entry, i) => entry === ordered[i]);
        expect((await written(shuffled)) !== undefined).toBe(inOrder);
      }),
      { numRuns: 150 },
    );
  });

  it('a read that fails rejects the result with its error; stop() rejects it without an unhandled rejection', async () => {
    const broken = new Error('disk gone');
    const writer = new OrderedBundleWriter();
    writer.add(text('a'));
    writer.add({ path: 'b', size: 4, read: async () => Buffer.alloc(4), readInto: async () => Promise.reject(broken) });
    writer.end();
    await expect(writer.result()).rejects.toBe(broken);

    const stopped = new OrderedBundleWriter();
    stopped.add(lazy('a', Buffer.alloc(5 * 1024 * 1024, 1)));
    stopped.stop();
    expect(stopped.declined).toBe(true);
    await expect(stopped.result()).rejects.toThrow('stopped');
  });
  it('a sink that refuses a chunk while entries are still packing rejects the result with its own error', async () => {
    // A full disk under a file sink: the writer, stopped by it while it waits for room for
    // its next block, fails only with "the output closed"; the sink's error is the one reported.
    const full = Object.assign(new Error('no space left on the device'), { code: 'ENOSPC' });
    let writes = 0;
    const sink: SinkFactory<number> = () => ({
      write() {
        writes += 1;
        if (writes === 2) throw full;
      },
      finish: () => writes,
    });
    const writer = new OrderedBundleWriter({}, true, sink);
    for (let i = 0; i < 10; i++) writer.add(lazy(`f${i}.bin`, noise(1 << 20, i)));
    writer.end();
    await expect(writer.result()).rejects.toBe(full);
  });

  it('a block a read fills after stop() does not go to compression', async () => {
    // The writer is stopped while it reads a file; the read then fills a block. Before, that
    // block still went to compression, and its stream was closed when another block's job
    // ended (the failure paired streams and jobs by index): zlib could finish the block on a
    // closed stream, and Node threw an uncaught internal assertion (see tar-gzip-blocks).
    const deflate = vi.spyOn(DeflateLane.prototype, 'deflate');
    let openGate = () => {};
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let reading = () => {};
    const reached = new Promise<void>((resolve) => (reading = resolve));
    const writer = new OrderedBundleWriter();
    for (let i = 0; i < 4; i++) writer.add(lazy(`f${i}.bin`, noise(1 << 20, i)));
    const slow = noise(1 << 20, 9);
    writer.add({
      path: 'g.bin',
      size: slow.length,
      read: async () => slow,
      readInto: async (target) => {
        reading();
        await gate;
        slow.copy(target);
      },
    });
    writer.end();
    const result = writer.result();
    result.catch(() => {});
    await reached;
    writer.stop();
    const before = deflate.mock.calls.length;
    openGate();
    await expect(result).rejects.toThrow('stopped');
    await new Promise((r) => setTimeout(r, 100));
    expect(before).toBeGreaterThanOrEqual(4);
    expect(deflate.mock.calls.length).toBe(before);
    deflate.mockRestore();
  });

  it('gives its sink no chunk after stop(), not even of blocks that were compressing then', async () => {
    let stopped = false;
    let writes = 0;
    let late = 0;
    const sink: SinkFactory<number> = () => ({
      write() {
        writes += 1;
        if (stopped) late += 1;
      },
      finish: () => writes,
    });
    const writer = new OrderedBundleWriter({}, false, sink);
    for (let i = 0; i < 8; i++) writer.add(lazy(`f${i}.bin`, noise(1 << 20, i)));
    // The gzip header and the first block are out: the next blocks are compressing.
    for (let waited = 0; writes < 2 && waited < 10_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    expect(writes).toBeGreaterThanOrEqual(2);
    writer.stop();
    stopped = true;
    await expect(writer.result()).rejects.toThrow('stopped');
    await new Promise((r) => setTimeout(r, 300)); // what was compressing has finished by now
    expect(late).toBe(0);
  });
});

describe('defineCode of one workspace folder: packed while it is listed', () => {
  it('gives the bytes of the sorted writer (the path a cached build takes)', async () => {
    const spec: Record<string, string | { content: string; mode: number }> = {
      'src/x/a.txt': 'a',
      'src/x-y.txt': 'xy',
      'src/x.txt': 'x',
      'src/bin/run': { content: '#!/bin/sh\n', mode: 0o755 },
      [`src/long/${'n'.repeat(140)}.md`]: 'long',
    };
    for (let i = 0; i < 300; i++)
      spec[`src/gen/${String(i).padStart(3, '0')}/file.js`] = `export const v = ${i};\n`.repeat(i);
    const root = await makeWorkspace(spec);
    const code = { sources: [{ local: 'src/' }] };
    const streamed = await defineCodeWithReport({ workspaceRoot: root, code });
    const cache = await openContentStore({ root: join(await makeWorkspace({}), 'cache') });
    const sorted = await defineCodeWithReport({ workspaceRoot: root, code, cache });
    expect(streamed.bundle.equals(sorted.bundle)).toBe(true);
    expect(streamed.report).toEqual(sorted.report);
  });

  it('names that list in another order than the archive are packed the usual way: the same bytes', async () => {
    // The listing sorts U+1F600 before U+E000 (UTF-16), the archive after (UTF-8).
    const root = await makeWorkspace({ 'src/\u{1f600}.txt': 'smile', 'src/\ue000.txt': 'private', 'src/a.txt': 'a' });
    const { bundle } = await defineCodeWithReport({ workspaceRoot: root, code: { sources: [{ local: 'src/' }] } });
    const entries = await readBundleEntries(bundle, { maxBytes: 1 << 20, maxFiles: 10 });
    expect(entries.map((e) => e.path)).toEqual(['src/a.txt', 'src/\ue000.txt', 'src/\u{1f600}.txt']);
    expect(bundle.equals((await writeBundleDigested(entries, {}, true)).bundle)).toBe(true);
  });

  it('refusals that come after the listing still win over the bundle: limits, the run file', async () => {
    const spec: Record<string, string> = {};
    for (let i = 0; i < 50; i++) spec[`src/f${String(i).padStart(2, '0')}.txt`] = 'x'.repeat(100_000);
    const root = await makeWorkspace(spec);
    const code = { sources: [{ local: 'src/' }] };
    await expect(defineCodeWithReport({ workspaceRoot: root, code, limits: { maxFiles: 40 } })).rejects.toBeInstanceOf(
      BundleSizeError,
    );
    await expect(defineCodeWithReport({ workspaceRoot: root, code, run: 'src/main.py' })).rejects.toBeInstanceOf(
      RunFileMissingError,
    );
  });

  it('a file that grows after it was listed is refused, not packed at either size', async () => {
    const root = await makeWorkspace({ 'src/a.txt': 'a', 'src/b.txt': 'b'.repeat(10) });
    const fs = nodeWorkspaceFs(root);
    const listed = fs.readDir.bind(fs);
    // The file grows right after its folder was listed, before its bytes are read.
    const growing = {
      ...fs,
      readDir: async (rel: string) => {
        const entries = await listed(rel);
        if (rel.replace(/\/$/, '') === 'src') await writeFile(join(root, 'src/b.txt'), 'b'.repeat(20));
        return entries;
      },
    };
    await expect(
      defineCodeWithReport({ workspaceRoot: root, fs: growing, code: { sources: [{ local: 'src/' }] } }),
    ).rejects.toMatchObject({ code: 'AIP26_SOURCE_UNRESOLVED', reason: 'read-failed' });
  });

  /** A workspace of `count` folders of one file each, and a WorkspaceFs that counts folders listed and files read. */
  async function countedWorkspace(count: number, failAt?: number) {
    const spec: Record<string, string> = {};
    for (let i = 0; i < count; i++) spec[`src/d${String(i).padStart(3, '0')}/f.txt`] = `${i}`.repeat(20_000);
    const root = await makeWorkspace(spec);
    const fs = nodeWorkspaceFs(root);
    const seen = { listed: 0, read: 0, leads: [] as number[] };
    const counted = {
      ...fs,
      readDir: async (rel: string) => {
        seen.listed++;
        return fs.readDir(rel);
      },
      readFileInto: async (rel: string, target: Buffer) => {
        seen.read++;
        seen.leads.push(seen.listed - seen.read);
        if (seen.read === failAt) throw Object.assign(new Error('the disk went away'), { code: 'EIO' });
        return fs.readFileInto!(rel, target);
      },
    };
    return { root, fs: counted, seen };
  }

  it('the listing waits for the reads until every deflate stream has a block, then runs ahead', async () => {
    // 300 files of 20-60 KB in folders of their own: the first four 1 MiB blocks take ~100 of them.
    const { root, fs, seen } = await countedWorkspace(300);
    const code = { sources: [{ local: 'src/' }] };
    const { bundle } = await defineCodeWithReport({ workspaceRoot: root, fs, code });
    expect(seen.read).toBe(300);
    // Paced, it is at most 16 entries (8 folders and their files) ahead of the reads; running
    // free it was 50-227 folders ahead within the first hundred files.
    expect(Math.max(...seen.leads.slice(0, 90))).toBeLessThanOrEqual(9);
    // Once compression is under way on every stream, it goes ahead of them again.
    expect(Math.max(...seen.leads)).toBeGreaterThan(20);
    const cache = await openContentStore({ root: join(await makeWorkspace({}), 'cache') });
    expect(bundle.equals((await defineCodeWithReport({ workspaceRoot: root, code, cache })).bundle)).toBe(true);
  });

  it('a read that fails while the listing waits for it ends the bundle with its error, never a hang', async () => {
    const { root, fs, seen } = await countedWorkspace(300, 3);
    await expect(
      defineCodeWithReport({ workspaceRoot: root, fs, code: { sources: [{ local: 'src/' }] } }),
    ).rejects.toMatchObject({ code: 'AIP26_SOURCE_UNRESOLVED', reason: 'read-failed' });
    // The listing was waiting (a few folders ahead) when the read failed, and went on to its end.
    expect(seen.leads[2]).toBeLessThanOrEqual(9);
    expect(seen.listed).toBe(301); // src and its 300 folders
  });
});
