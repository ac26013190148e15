import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants, deflateRawSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bundleStream, readTarGz, writeBundle } from '../src/index.js';
import { DeflateLane, GZIP_BLOCK_BYTES, LANE_OUTPUT_BYTES, ParallelGzip } from '../src/tar/parallel-gzip.js';
import { memorySink } from '../src/tar/write-bundle.js';

describe('gzip in independent blocks', () => {
  it('writes a multi-block gzip that gzip -t, zlib and GNU tar all accept, byte for byte', async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({
      path: `blob${i}.bin`,
      data: i % 2 ? randomBytes(1_300_000) : Buffer.alloc(1_300_000, i),
    }));
    const bundle = await writeBundle(entries);
    execFileSync('gzip', ['-t'], { input: bundle });
    expect(gunzipSync(bundle).length).toBeGreaterThan(5 * 1_300_000);
    const listed = execFileSync('tar', ['-tzf', '-'], { input: bundle }).toString().trim().split('\n');
    expect(listed).toEqual(entries.map((e) => e.path));
    const read = await readTarGz(bundle, { maxBytes: 64 * 1024 * 1024, maxFiles: 10 });
    for (const entry of entries) expect(read.get(entry.path)!.equals(entry.data)).toBe(true);
  });

  it('round-trips many small files spanning several blocks (batched writes are copied before reuse)', async () => {
    const entries = Array.from({ length: 3000 }, (_, i) => ({
      path: `s/${String(i).padStart(4, '0')}.txt`,
      data: randomBytes(1000 + (i % 1000)),
    }));
    const bundle = await writeBundle(entries);
    const read = await readTarGz(bundle, { maxBytes: 64 * 1024 * 1024, maxFiles: 5000 });
    expect(read.size).toBe(entries.length);
    for (const entry of entries) expect(read.get(entry.path)!.equals(entry.data)).toBe(true);
    execFileSync('tar', ['-tzf', '-'], { input: bundle });
  });

  it('writes a bundle whose bound is past 16 MiB into a fresh mapping of over 32 MiB, zero past its end', async () => {
    const entries = [0, 1].map((i) => ({ path: `big${i}.bin`, data: Buffer.alloc(9_000_000, i + 1) }));
    const bundle = await writeBundle(entries);
    // The output buffer is allocated at the bound, raised past glibc's largest mmap threshold.
    expect(bundle.buffer.byteLength).toBeGreaterThan(32 << 20);
    expect(new Uint8Array(bundle.buffer, bundle.byteOffset + bundle.length).every((byte) => byte === 0)).toBe(true);
    execFileSync('gzip', ['-t'], { input: bundle });
    const read = await readTarGz(bundle, { maxBytes: 64 * 1024 * 1024, maxFiles: 10 });
    for (const entry of entries) expect(read.get(entry.path)!.equals(entry.data)).toBe(true);
  });

  it('gives the same bytes however the entries are ordered or wrapped', async () => {
    const entries = Array.from({ length: 40 }, (_, i) => ({ path: `d/f${i}`, data: Buffer.alloc(100_000 + i, i) }));
    const a = await writeBundle(entries);
    const b = await writeBundle(
      (async function* () {
        yield* [...entries].reverse();
      })(),
    );
    expect(b.equals(a)).toBe(true);
  });
});

/**
 * The bundle in memory when its bound is known only after the last chunk (files measured as
 * they are packed): a provisional buffer of fresh pages, then the bundle as one buffer.
 */
describe('a bundle in memory whose size is known only at its end', () => {
  const MiB = 1 << 20;
  /** Writes `total` bytes in chunks of `chunk` (each of its own byte values), the bound known after `known` bytes (never: undefined). */
  function fill(total: number, chunk: number, known?: number) {
    let written = 0;
    let ended = false;
    const sink = memorySink(() => (ended || (known !== undefined && written >= known) ? total + 1024 : undefined));
    const parts: Buffer[] = [];
    for (let i = 0; written < total; i++) {
      const part = Buffer.alloc(Math.min(chunk, total - written), i % 251);
      sink.write(part);
      parts.push(part);
      written += part.length;
    }
    const finish = () => {
      ended = true;
      return sink.finish();
    };
    return { sink, expected: Buffer.concat(parts), finish };
  }

  it('a small bundle gets memory of its own size, not the provisional buffer nor a slice of a shared pool', () => {
    for (const total of [100, 3000, 5 * MiB]) {
      const { expected, finish } = fill(total, 64 * 1024);
      const bundle = finish();
      expect(bundle.equals(expected)).toBe(true);
      expect(bundle.byteOffset).toBe(0);
      expect(bundle.buffer.byteLength).toBe(total);
    }
  });

  it('one past a quarter of the provisional buffer is a view of it, zero past its end', () => {
    const { expected, finish } = fill(12 * MiB, MiB);
    const bundle = finish();
    expect(bundle.equals(expected)).toBe(true);
    expect(bundle.buffer.byteLength).toBeGreaterThan(32 * MiB);
    expect(new Uint8Array(bundle.buffer, bundle.byteOffset + bundle.length).every((byte) => byte === 0)).toBe(true);
  });

  it('one that outgrows it, its bound still unknown, is joined once into a buffer of its size', () => {
    const { expected, finish } = fill(75 * MiB + 12345, MiB + 7);
    const bundle = finish();
    expect(bundle.length).toBe(expected.length);
    expect(bundle.equals(expected)).toBe(true);
    expect(bundle.buffer.byteLength).toBe(expected.length);
  });

  it('one whose bound becomes known before it outgrows the provisional buffer goes on in one buffer of the bound', () => {
    const { expected, finish } = fill(40 * MiB, MiB, 20 * MiB);
    const bundle = finish();
    expect(bundle.equals(expected)).toBe(true);
    expect(bundle.buffer.byteLength).toBe(40 * MiB + 1024);
  });

  it('one whose bound is known at its first chunk is one buffer of that bound, as before', () => {
    const { expected, finish } = fill(40 * MiB, MiB, 0);
    const bundle = finish();
    expect(bundle.equals(expected)).toBe(true);
    expect(bundle.buffer.byteLength).toBe(40 * MiB + 1024);
  });

  it('is never finished before its bound is known, nor twice', () => {
    const { sink } = fill(1000, 100);
    expect(() => sink.finish()).toThrow(/before its entries were all known/);
    const { finish } = fill(1000, 100);
    finish();
    expect(finish).toThrow(/finished twice/);
  });
});

describe('memory kept from one bundle for the next', () => {
  /** The gzip each bundle must be: every 1 MiB of its tar deflated by a fresh zlib stream (memLevel 9, as pinned). */
  function freshStreams(bundle: Buffer, level: number): Buffer {
    const tar = gunzipSync(bundle); // also checks the trailer's CRC and size
    const blocks: Buffer[] = [];
    for (let offset = 0; offset < tar.length; offset += 1 << 20) {
      const last = offset + (1 << 20) >= tar.length;
      blocks.push(
        deflateRawSync(tar.subarray(offset, offset + (1 << 20)), {
          level,
          memLevel: 9,
          finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH,
          // Room for the whole output: a sync flush that fills the buffer exactly is written twice.
          chunkSize: 2 << 20,
        }),
      );
    }
    return Buffer.concat([bundle.subarray(0, 10), ...blocks, bundle.subarray(bundle.length - 8)]);
  }
  const entries = Array.from({ length: 12 }, (_, i) => ({
    path: `part${String(i).padStart(2, '0')}.bin`,
    data: i % 3 === 0 ? randomBytes(700_000) : Buffer.from(`${i} text that compresses `.repeat(30_000)),
  }));

  it('a finished gzip, kept for the life of the process as the shape of the next, holds none of its memory', async () => {
    const input = randomBytes(3 * GZIP_BLOCK_BYTES + 12_345);
    const gzip = new ParallelGzip(6);
    gzip.append(input);
    gzip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of gzip.output()) chunks.push(chunk);
    expect(gunzipSync(Buffer.concat(chunks)).equals(input)).toBe(true);
    // Every buffer the instance still reaches through its fields (arrays included): none holds a byte.
    const held: Buffer[] = [];
    for (const value of Object.values(gzip))
      for (const item of Array.isArray(value) ? value : [value]) if (Buffer.isBuffer(item)) held.push(item);
    expect(held.length).toBeGreaterThan(0); // the finished block, replaced by an empty one
    expect(held.map((buffer) => buffer.length)).toEqual(held.map(() => 0));
  });

  it('gives what fresh zlib streams give: bundles at once, at other levels, and after bundles that failed', async () => {
    const first = await writeBundle(entries);
    expect(first.equals(freshStreams(first, 6))).toBe(true);

    // Several at once, at three levels, each drawing on the blocks and streams of the others.
    const levels = [6, 1, 9, 6, 1];
    const together = await Promise.all(levels.map((level) => writeBundle(entries, { level })));
    for (const [i, bundle] of together.entries()) expect(bundle.equals(freshStreams(bundle, levels[i]!))).toBe(true);
    expect(together[0]!.equals(first)).toBe(true);

    // A bundle whose reader fails while blocks are compressing, and one whose consumer stops early.
    let reads = 0;
    const failing = entries.map((entry) => ({
      path: entry.path,
      size: entry.data.length,
      read: async () => {
        if (++reads === 8) throw new Error('disk gone');
        return entry.data;
      },
    }));
    await expect(writeBundle(failing)).rejects.toThrow('disk gone');
    const stream = bundleStream(entries);
    for await (const _chunk of stream) break;

    const after = await writeBundle(entries);
    expect(after.equals(first)).toBe(true);
    const afterFast = await writeBundle(entries, { level: 1 });
    expect(afterFast.equals(together[1]!)).toBe(true);
  });

  /** Source-like text of `size` bytes from `seed` (xorshift), the same on every run. */
  function text(seed: number, size: number): Buffer {
    let x = seed;
    const next = () => {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      return x;
    };
    const words =
      'const let function return import export from await async class new this if else for of in null'.split(' ');
    const parts: string[] = [];
    for (let n = 0; n < size; ) {
      const word = next() % 7 === 0 ? next().toString(36) : words[next() % words.length]!;
      parts.push(word);
      n += word.length + 1;
    }
    return Buffer.from(parts.join(' ').slice(0, size));
  }

  it('a last block shorter than the deflate window gives the same bytes whatever the stream deflated before', async () => {
    // Seeds where a stream reset after a 900 KB bundle deflated the short block to other bytes
    // (the same length, other matches) than a fresh stream: zlib compares matches up to 258
    // bytes past the input, and a reset does not clear what an earlier block left there.
    for (const seed of [187, 270, 541]) {
      await writeBundle([{ path: 'history.js', data: text(seed + 100_000, 900_000) }]);
      const short = await writeBundle([{ path: 'short.js', data: text(seed, 20_000 + ((seed * 7919) % 40_000)) }]);
      expect(short.equals(freshStreams(short, 6))).toBe(true);
    }
  });
});

describe('a deflate stream used for block after block', () => {
  /** A block deflated by a fresh stream with room for all of it: the bytes every block must get. */
  const fresh = (block: Buffer) =>
    deflateRawSync(block, { level: 6, memLevel: 9, finishFlush: constants.Z_SYNC_FLUSH, chunkSize: 2 << 20 });

  /**
   * A block B, and a block A whose output leaves B's output less `short` bytes of room in the
   * stream's buffer: A is zeros ending in k random bytes, k found by bisection (the output
   * grows with k).
   */
  const leavingRoom = (short: number) => {
    const random = randomBytes(GZIP_BLOCK_BYTES);
    for (let half = GZIP_BLOCK_BYTES / 2; half < GZIP_BLOCK_BYTES / 2 + 64; half++) {
      const b = Buffer.alloc(GZIP_BLOCK_BYTES);
      random.copy(b, 0, 0, half);
      const room = LANE_OUTPUT_BYTES - fresh(b).length + short;
      const a = (k: number) => {
        const block = Buffer.alloc(GZIP_BLOCK_BYTES);
        random.copy(block, GZIP_BLOCK_BYTES - k, GZIP_BLOCK_BYTES - k);
        return block;
      };
      let [low, high] = [0, GZIP_BLOCK_BYTES];
      while (low <= high) {
        const k = (low + high) >> 1;
        const size = fresh(a(k)).length;
        if (size === room) return { a: a(k), b };
        if (size < room) low = k + 1;
        else high = k - 1;
      }
    }
    return undefined;
  };

  // 0: the marker ends exactly at the end of the buffer; 1-4: the buffer ends inside it.
  it.each([0, 1, 2, 3, 4])(
    'gives the bytes of a fresh stream for a block whose flush marker has %i of its bytes past the end of its output buffer',
    async (past) => {
      const found = leavingRoom(past);
      expect(found).toBeDefined();
      const { a, b } = found!;

      // Deflated as it comes, B gets a second flush marker: the case this test is about.
      const plain = new DeflateLane(6);
      await plain.deflate(a, false, false);
      const repeated = await plain.deflate(b, false, false, false);
      plain.close();
      expect(repeated.length).toBeGreaterThan(1);
      expect(Buffer.concat(repeated).length).toBe(fresh(b).length + 5);
      // The marker (LEN 0, NLEN 0xffff), then on the byte boundary it left, the same again.
      expect(Buffer.concat(repeated).subarray(-9).toString('hex')).toBe('0000ffff000000ffff');

      const lane = new DeflateLane(6);
      await lane.deflate(a, false, false);
      expect(Buffer.concat(await lane.deflate(b, false, false)).equals(fresh(b))).toBe(true);
      // And the stream goes on giving a fresh stream's bytes.
      expect(Buffer.concat(await lane.deflate(a, false, false)).equals(fresh(a))).toBe(true);
      lane.close();
    },
  );

  it("that rewinds writes each block at the start of its one output buffer, over the last, with a fresh stream's bytes", async () => {
    // Blocks that would end the second block's marker past the buffer's end, were it written after the first.
    const found = leavingRoom(2);
    expect(found).toBeDefined();
    const { a, b } = found!;
    const lane = new DeflateLane(6);
    const first = await lane.deflate(a, false, true);
    // Written with its flush: one trip through the thread pool, one chunk.
    expect(first).toHaveLength(1);
    const firstBytes = Buffer.concat(first);
    expect(firstBytes.equals(fresh(a))).toBe(true);
    const second = await lane.deflate(b, false, true);
    // The same buffer, from its start: no fresh memory, and no marker split at its end.
    expect(second[0]!.buffer).toBe(first[0]!.buffer);
    expect(second[0]!.byteOffset).toBe(first[0]!.byteOffset);
    expect(second).toHaveLength(1);
    expect(Buffer.concat(second).equals(fresh(b))).toBe(true);
    // What the first block's chunks showed is gone: they are lent until the next block only.
    expect(Buffer.concat(first).equals(firstBytes)).toBe(false);
    const third = await lane.deflate(a, false, true);
    expect(third[0]!.buffer).toBe(first[0]!.buffer);
    expect(Buffer.concat(third).equals(firstBytes)).toBe(true);
    lane.close();
  });
});

describe('a deflate stream closed while it works', () => {
  it('ends its job with an error, never an uncaught one, at whatever moment of the block it is closed', async () => {
    // Closed while zlib finished the block's flush, Node calls the flush back without an
    // error, on a stream whose handle is gone: resetting it then threw an uncaught internal
    // assertion ("zlib binding closed"), which ends a host's process. Closed at every moment
    // of a block's compression, each job must settle, and none may throw uncaught.
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const data = randomBytes(1 << 20);
      const started = performance.now();
      await new DeflateLane(6).deflate(data, false, true);
      const blockMs = performance.now() - started;
      // Closed later and later (in steps of a 25th of a block's time as first measured) until
      // a job ends before its close: every moment of a block's compression is swept, however
      // slow the machine is now.
      const outcomes: string[] = [];
      for (let i = 0; i < 400 && !outcomes.includes('compressed'); i++) {
        const lane = new DeflateLane(6);
        const job = lane.deflate(data, false, true);
        await new Promise((r) => setTimeout(r, (blockMs * i) / 25));
        lane.close();
        outcomes.push(
          await job.then(
            () => 'compressed',
            (error: Error) => error.message,
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 50));
      expect(uncaught).toEqual([]);
      expect(outcomes[0]).not.toBe('compressed');
      expect(outcomes).toContain('compressed');
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('lent output', () => {
  /** `blocks` MiB of text, each MiB different. */
  const entries = (blocks: number) =>
    Array.from({ length: blocks * 4 }, (_, i) => ({
      path: `t/${String(i).padStart(3, '0')}.txt`,
      data: Buffer.from(`${i} `.repeat(40_000) + randomBytes(150_000).toString('base64')).subarray(0, 256 * 1024),
    }));

  it('is never seen by a reader of bundleStream, which may keep every chunk it was given', async () => {
    const input = entries(12); // three times more blocks than deflate streams
    const kept: Buffer[] = [];
    for await (const chunk of bundleStream(input)) kept.push(chunk as Buffer);
    const bundle = await writeBundle(input);
    expect(Buffer.concat(kept).equals(bundle)).toBe(true);
    expect(gunzipSync(bundle).length).toBeGreaterThan(12 * GZIP_BLOCK_BYTES);
  });

  it('is what a ParallelGzip made with lends gives: each chunk valid until the next is asked for', async () => {
    const gzip = new ParallelGzip(6, true);
    const data = Buffer.concat(entries(8).map((entry) => entry.data));
    // Written as a bundle is, waiting for room: the blocks take turns on a few streams.
    const writing = (async () => {
      for (let at = 0; at < data.length; at += 64 * 1024) {
        gzip.append(data.subarray(at, at + 64 * 1024));
        await gzip.room();
      }
      gzip.end();
    })();
    const copies: Buffer[] = [];
    const views: Buffer[] = [];
    for await (const chunk of gzip.output()) {
      copies.push(Buffer.from(chunk));
      views.push(chunk);
    }
    await writing;
    expect(gunzipSync(Buffer.concat(copies)).equals(data)).toBe(true);
    // Later blocks went through the same buffers, over what the early views showed.
    expect(Buffer.concat(views).equals(Buffer.concat(copies))).toBe(false);
  });
});

describe('lazily read entries', () => {
  it('reads each file only when the archive reaches it, giving the same bytes as in-memory entries', async () => {
    const data = Array.from({ length: 50 }, (_, i) => randomBytes(20_000 + i));
    const order: number[] = [];
    const lazy = await writeBundle(
      data.map((d, i) => ({
        path: `f${String(i).padStart(2, '0')}`,
        size: d.length,
        read: async () => {
          order.push(i);
          return d;
        },
      })),
    );
    const eager = await writeBundle(data.map((d, i) => ({ path: `f${String(i).padStart(2, '0')}`, data: d })));
    expect(lazy.equals(eager)).toBe(true);
    expect(order).toEqual(data.map((_, i) => i));
  });

  it('reads files into a few reused buffers and still writes exactly their bytes', async () => {
    const data = Array.from({ length: 400 }, (_, i) => randomBytes(5_000 + ((i * 7919) % 60_000)));
    const memories = new Set<ArrayBufferLike>();
    const entries = data.map((d, i) => ({
      path: `r/${String(i).padStart(3, '0')}`,
      size: d.length,
      read: async () => Buffer.from(d),
      readInto: async (target: Buffer) => {
        memories.add(target.buffer);
        d.copy(target);
      },
    }));
    const reused = await writeBundle(entries);
    const eager = await writeBundle(data.map((d, i) => ({ path: `r/${String(i).padStart(3, '0')}`, data: d })));
    expect(reused.equals(eager)).toBe(true);
    expect(memories.size).toBeLessThanOrEqual(8);
  });

  it('refuses a file whose size changed between planning and reading', async () => {
    const error = await writeBundle([{ path: 'a', size: 3, read: async () => Buffer.from('four') }]).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'AIP26_BUNDLE_ENTRY', reason: 'size-changed', path: 'a' });
  });
});
