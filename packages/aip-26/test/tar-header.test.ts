import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { bundleStream, writeBundle } from '../src/index.js';
import { headerBytes, writeHeader } from '../src/tar/tar-header.js';
import { sampleEntries, sha256 } from './fixtures/tar/sample-bundle.js';

/** Deterministic bytes (an LCG), so the pinned digests below need no fixture files. */
function bytes(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}

/** What tar-stream's `pack` writes for one entry (the writer bundles were made with before). */
async function tarStreamEntry(name: string, type: 'file' | 'directory', mode: number, data: Buffer): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of p) chunks.push(chunk as Buffer);
  })();
  const header = { name, type, mode, mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' };
  if (type === 'directory') p.entry(header);
  else p.entry(header, data);
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

describe('tar headers', () => {
  const long = `deep/${'segment-'.repeat(20)}/${'x'.repeat(120)}.txt`;
  const cases: [string, string, 'file' | 'directory', number, number][] = [
    ['a short name', 'src/main.js', 'file', 0o644, 22],
    ['an executable', 'run.sh', 'file', 0o755, 512],
    ['an empty file', 'data/empty', 'file', 0o644, 0],
    ['a folder', 'src/lib/', 'directory', 0o755, 0],
    ['a name of exactly 100 bytes', 'n'.repeat(100), 'file', 0o644, 1],
    ['a name split into ustar prefix and name', `split/${'p'.repeat(90)}/${'n'.repeat(90)}.txt`, 'file', 0o644, 513],
    ['a long folder name split in ustar', `${'d'.repeat(80)}/${'e'.repeat(80)}/`, 'directory', 0o755, 0],
    ['a single segment over 100 bytes (pax)', 'n'.repeat(101), 'file', 0o644, 3],
    ['a name over the ustar split (pax)', long, 'file', 0o644, 10],
    ['a non-ASCII name (pax)', 'données/été.txt', 'file', 0o644, 14],
    ['a non-ASCII folder (pax)', 'données/', 'directory', 0o755, 0],
    ['a pax record whose length gains a digit', 'a/'.repeat(45) + 'é'.repeat(2), 'file', 0o644, 7],
  ];
  it.each(cases)('%s: the same bytes as tar-stream', async (_label, name, type, mode, size) => {
    const data = bytes(size, 7);
    const expected = await tarStreamEntry(name, type, mode, data);
    const length = headerBytes(name);
    // Not zero-filled: every byte of the header must be written.
    const actual = Buffer.alloc(length, 0xa5);
    expect(writeHeader(actual, 0, name, type, mode, size)).toBe(length);
    expect(actual.toString('hex')).toBe(expected.subarray(0, length).toString('hex'));
  });
});

/** tar-stream's own header encoder (not in its package exports: loaded by its file). */
const require = createRequire(import.meta.url);
const tarStreamHeaders = require(join(dirname(require.resolve('tar-stream')), 'headers.js')) as {
  encode(header: Record<string, unknown>): Buffer | null;
};

describe('tar headers against tar-stream, any name, mode and size', () => {
  const segment = fc.stringMatching(/^[!-.0-~ ]{1,60}$/); // printable ASCII, no slash
  // Segments of any length up to 160: names whose cut lands exactly on ustar's limits (100
  // characters of name, 155 of prefix) and one past them.
  const long = fc.integer({ min: 1, max: 160 }).map((length) => 'n'.repeat(length));
  it('gives the bytes of its encoder for every header ustar can hold', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.array(segment, { minLength: 1, maxLength: 6 }), fc.array(long, { minLength: 1, maxLength: 4 })),
        fc.boolean(),
        fc.integer({ min: 0, max: 0o177777 }),
        fc.oneof(
          fc.integer({ min: 0, max: 2 ** 20 }),
          fc.integer({ min: 0, max: 2 ** 48 }),
          fc.constant(8 ** 11 - 1),
          fc.constant(8 ** 11),
        ),
        (segments, folder, mode, anySize) => {
          const name = segments.join('/') + (folder ? '/' : '');
          const size = folder ? 0 : anySize;
          const expected = tarStreamHeaders.encode({
            name,
            type: folder ? 'directory' : 'file',
            mode,
            size,
            mtime: new Date(0),
            uid: 0,
            gid: 0,
            uname: '',
            gname: '',
          });
          // A pax name (the cases above pin its bytes): ustar must not be tried for it either.
          if (expected === null) {
            expect(headerBytes(name)).toBeGreaterThan(512);
            return;
          }
          expect(headerBytes(name)).toBe(512);
          const actual = Buffer.alloc(512, 0xa5);
          writeHeader(actual, 0, name, folder ? 'directory' : 'file', mode, size);
          expect(actual.toString('hex')).toBe(expected.toString('hex'));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('the bundle bytes are pinned', () => {
  // Digests of the tar inside the gzip (the gzip depends on the zlib build; the tar does
  // not), as the tar-stream based writer made them: the in-place writer must give the same.
  const extra = () => [
    ...sampleEntries(),
    { path: `split/${'p'.repeat(90)}/${'n'.repeat(90)}.txt`, data: Buffer.from('ustar prefix\n') },
    // Lazily read files across the 1 MiB cuts: read into the block in place, or whole then copied.
    {
      path: 'big/a.bin',
      size: 3_000_001,
      read: async () => bytes(3_000_001, 1),
      readInto: async (target: Buffer) => void bytes(3_000_001, 1).copy(target),
    },
    { path: 'big/b.bin', size: 700_000, read: async () => bytes(700_000, 2) },
    {
      path: 'big/c.bin',
      size: 1 << 20,
      read: async () => bytes(1 << 20, 3),
      readInto: async (target: Buffer) => void bytes(1 << 20, 3).copy(target),
    },
    { path: 'big/d.bin', size: 0, read: async () => Buffer.alloc(0), readInto: async () => undefined },
  ];

  it('gives the tar the sample bundle always had', async () => {
    expect(sha256(gunzipSync(await writeBundle(sampleEntries())))).toBe(
      '2b5b09abd1c9c9657e7b80298e88dd953259130369619d82313bfe7b25f05279',
    );
  });

  it('gives the tar it always had for files read lazily across block cuts', async () => {
    const bundle = await writeBundle(extra());
    expect(sha256(gunzipSync(bundle))).toBe('f70494b23c30605d2436780e61e30d5ce04e52f7618f65799eea797b0c0b9ce9');
    const streamed: Buffer[] = [];
    for await (const chunk of bundleStream(extra())) streamed.push(chunk as Buffer);
    expect(Buffer.concat(streamed).equals(bundle)).toBe(true);
  });

  it('reads no further than the blocks in flight when the stream is destroyed early', async () => {
    let reads = 0;
    const entries = Array.from({ length: 200 }, (_, i) => ({
      path: `f/${String(i).padStart(3, '0')}`,
      size: 300_000,
      read: async () => {
        reads += 1;
        return bytes(300_000, i);
      },
    }));
    const stream = bundleStream(entries);
    for await (const _chunk of stream) break; // the gzip header only, then destroyed
    await new Promise((resolve) => setTimeout(resolve, 200));
    // At most the blocks in flight were filled: the writer did not read on to the end.
    expect(reads).toBeLessThan(40);
  });
});
