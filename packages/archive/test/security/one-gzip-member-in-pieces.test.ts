import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { deflateRawSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArchiveError, GunzipOneMember } from '../../src/index.js';

// GunzipOneMember hands the deflate data to the inflater in pieces of at least `chunkSize`
// bytes, copied into one buffer it reuses. These attack what that could break: the end of
// the deflate stream falling anywhere in a piece (or exactly at its end), a second member
// or other bytes hidden behind it, and the reused buffer being filled again too early.

/** FC_SEED=<n> replays a failing run; the seed is in every test's name and in fast-check's report. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);

/** One gzip member around raw deflate data made here, so the deflate stream's length is known. */
function member(data: Buffer, level = 0): Buffer {
  const trailer = gzipSync(data).subarray(-8); // CRC-32 and size
  return Buffer.concat([HEADER, deflateRawSync(data, { level }), trailer]);
}

/** `bytes` cut at these offsets into the chunks a readable hands on one by one. */
function cut(bytes: Buffer, at: number[]): Buffer[] {
  const offsets = [...new Set(at.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const offset of [...offsets, bytes.length]) {
    if (offset > start) chunks.push(bytes.subarray(start, offset));
    start = offset;
  }
  return chunks;
}

/** A cut between every two bytes. */
const everyByte = (bytes: Buffer) => Array.from({ length: bytes.length }, (_, i) => i);

/** What the reader hands on, or the error it stops with; and every piece its inflater was given. */
async function gunzip(
  chunks: Buffer[],
  chunkSize: number,
): Promise<{ out: Buffer; error?: unknown; pieces: number[] }> {
  const reader = new GunzipOneMember(chunkSize);
  const inflater = (reader as unknown as { inflate: Writable }).inflate;
  const write = inflater.write.bind(inflater) as (chunk: Buffer, callback: (error?: Error | null) => void) => boolean;
  const pieces: number[] = [];
  (inflater as unknown as { write: typeof write }).write = (chunk, callback) => {
    pieces.push(chunk.length);
    return write(chunk, callback);
  };
  const out: Buffer[] = [];
  // Each chunk in memory of its own: a reader that read past a chunk's end would not find the next bytes there by luck.
  const input = Readable.from(
    chunks.map((chunk) => Buffer.from(chunk)),
    { objectMode: false },
  );
  try {
    await pipeline(
      input,
      reader,
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          out.push(Buffer.from(chunk));
          done();
        },
      }),
    );
    return { out: Buffer.concat(out), pieces };
  } catch (error) {
    return { out: Buffer.concat(out), error, pieces };
  }
}

const CHUNK = 64;

describe('one gzip member, inflated in pieces', () => {
  it('ends the deflate stream at every offset in a piece, and exactly at its end: the data, then only zeros, accepted', async () => {
    // Stored (level 0) deflate data is 5 bytes longer than the data: lengths 0..186 put the
    // stream's end at each of the 64 offsets of a piece, 64 and 128 exactly at its end.
    for (let length = 0; length < 3 * CHUNK - 5; length++) {
      const data = Buffer.alloc(length, length % 251);
      const bytes = member(data);
      for (const chunks of [[bytes], cut(bytes, [HEADER.length + 1]), cut(bytes, everyByte(bytes))]) {
        const plain = await gunzip(chunks, CHUNK);
        expect(plain.error, `length ${length}`).toBeUndefined();
        expect(plain.out.equals(data), `length ${length}`).toBe(true);
        const padded = await gunzip([...chunks, Buffer.alloc(100)], CHUNK);
        expect(padded.error, `length ${length}, padded`).toBeUndefined();
        expect(padded.out.equals(data), `length ${length}, padded`).toBe(true);
      }
    }
  });

  it('refuses a second member or other bytes after the trailer wherever the first ends in a piece, before inflating them', async () => {
    const hidden = Buffer.from('#!/bin/sh\nrm -rf ~\n'.repeat(20));
    const second = member(hidden, 9);
    for (let length = 0; length < 3 * CHUNK - 5; length++) {
      const data = Buffer.alloc(length, 1);
      const first = member(data);
      for (const [after, reason] of [
        [second, 'gzip-member'],
        [Buffer.concat([Buffer.alloc(7), Buffer.from('x')]), 'trailing-data'],
      ] as const) {
        const bytes = Buffer.concat([first, after]);
        for (const chunks of [
          [bytes],
          [first, after],
          // A piece begun by one chunk and completed by the next, which goes on past the stream's end.
          cut(bytes, [HEADER.length + 1]),
          cut(bytes, [HEADER.length + 40]),
          cut(bytes, everyByte(bytes)),
        ]) {
          const { out, error } = await gunzip(chunks, CHUNK);
          expect(error, `length ${length}`).toBeInstanceOf(ArchiveError);
          expect(error, `length ${length}`).toMatchObject({ reason });
          expect(out.includes(hidden.subarray(0, 16)), `length ${length}`).toBe(false);
        }
      }
    }
  });

  it(`gives back exactly the data and hands the inflater pieces of at least chunkSize, however the input is cut (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 20_000 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 9 }),
        fc.constantFrom(64, 100, 1024, 4096),
        fc.array(fc.nat(), { maxLength: 40 }),
        async (raw, compressible, level, chunkSize, at) => {
          // Compressible data makes pieces that inflate to many output chunks; random bytes, to about one.
          const data = compressible ? Buffer.from(Array.from(raw, (byte) => byte & 3)) : Buffer.from(raw);
          const bytes = member(data, level);
          const { out, error, pieces } = await gunzip(cut(bytes, at), chunkSize);
          expect(error).toBeUndefined();
          expect(out.equals(data)).toBe(true);
          // Every piece but the last two is full (the one the stream ends in, and the trailer's).
          expect(pieces.slice(0, -2).every((length) => length >= chunkSize)).toBe(true);
          expect(pieces.reduce((sum, length) => sum + length, 0)).toBeGreaterThanOrEqual(
            bytes.length - HEADER.length - 8,
          );
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });

  it('hands a file stream read in 64 KiB chunks to the inflater in a few 1 MiB pieces, not a trip per chunk', async () => {
    const data = randomBytes(8 << 20); // incompressible: about 8 MiB of deflate data
    const bytes = member(data, 1);
    const chunks = cut(
      bytes,
      Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => i * 65536),
    );
    const { out, error, pieces } = await gunzip(chunks, 1 << 20);
    expect(error).toBeUndefined();
    expect(out.equals(data)).toBe(true);
    expect(chunks.length).toBeGreaterThan(100);
    expect(pieces.length).toBeLessThanOrEqual(Math.ceil(bytes.length / (1 << 20)) + 1);
  });
});
