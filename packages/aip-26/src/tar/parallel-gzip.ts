import * as zlib from 'node:zlib';

/** Bytes of the tar stream compressed as one independent block run. Fixed: part of the output's identity. */
export const GZIP_BLOCK_BYTES = 1 << 20;
/** Blocks compressing at once: libuv's thread pool has 4 threads. */
const IN_FLIGHT = 4;
const OS_UNIX = 3;

/**
 * gzip compressed on every core: the input is cut at fixed 1 MiB offsets, each block
 * deflated independently (as `pigz --independent` does) and ended with a sync flush, so the
 * raw deflate streams concatenate into one valid stream; the last one is finished. The cuts
 * depend only on byte offsets, never on how the input arrives, so the output is
 * deterministic for a given zlib. It costs a little ratio (no dictionary shared across
 * blocks) for a speedup of about the number of cores. The header is pinned: no name,
 * mtime 0, OS 3 (Unix) on every platform.
 *
 * The writer puts its bytes straight into the block being filled (`append` copies a chunk,
 * `fill` lets a reader write a file into the block in place, one copy from the kernel) and
 * awaits `room()` between entries; the reader takes the gzip from `output()`. A writer that
 * fails calls `fail`, and `output()` throws its error.
 */
export class ParallelGzip {
  /** Input blocks whose compression finished: reused, so a bundle churns a few MiB, not its size. */
  private readonly spare: Buffer[] = [];
  private block: Buffer = Buffer.allocUnsafe(GZIP_BLOCK_BYTES);
  private used = 0;
  /** For data that straddles a cut: read whole here, then copied into the blocks. */
  private scratch: Buffer | undefined;
  private crc = 0;
  private size = 0;
  private readonly jobs: Promise<Buffer>[] = [];
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private blocked: (() => void) | undefined;

  constructor(private readonly level: number) {}

  /** Copies `chunk` into the blocks; full blocks start compressing. */
  append(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length) {
      const copied = Math.min(chunk.length - offset, GZIP_BLOCK_BYTES - this.used);
      this.block.set(chunk.subarray(offset, offset + copied), this.used);
      this.used += copied;
      offset += copied;
      if (this.used === GZIP_BLOCK_BYTES) this.cut();
    }
  }

  /** `bytes` zero bytes (tar padding and end marker). */
  zeros(bytes: number): void {
    let left = bytes;
    while (left > 0) {
      const n = Math.min(left, GZIP_BLOCK_BYTES - this.used);
      this.block.fill(0, this.used, this.used + n);
      this.used += n;
      left -= n;
      if (this.used === GZIP_BLOCK_BYTES) this.cut();
    }
  }

  /**
   * A view of the next `bytes` bytes of the current block, for a writer to fill (tar
   * headers), when they fit before the next cut; undefined otherwise. `commit` them after.
   */
  reserve(bytes: number): Buffer | undefined {
    return this.used + bytes <= GZIP_BLOCK_BYTES ? this.block.subarray(this.used, this.used + bytes) : undefined;
  }

  commit(bytes: number): void {
    this.used += bytes;
    if (this.used === GZIP_BLOCK_BYTES) this.cut();
  }

  /**
   * `bytes` bytes written by `read` into a buffer of exactly that length: the current block
   * itself when they fit before the next cut (no copy), else a scratch buffer copied in.
   */
  async fill(bytes: number, read: (target: Buffer) => Promise<void>): Promise<void> {
    const view = this.reserve(bytes);
    if (view) {
      await read(view);
      this.commit(bytes);
      return;
    }
    let target: Buffer;
    if (bytes <= GZIP_BLOCK_BYTES) {
      this.scratch ??= Buffer.allocUnsafe(GZIP_BLOCK_BYTES);
      target = this.scratch.subarray(0, bytes);
    } else {
      target = Buffer.allocUnsafe(bytes);
    }
    await read(target);
    this.append(target);
  }

  /**
   * Resolves when the writer may go on: fewer than IN_FLIGHT blocks wait for the reader.
   * Rejects once the output failed or its reader stopped, so the writer reads no further.
   */
  async room(): Promise<void> {
    if (this.jobs.length >= IN_FLIGHT && !this.failure) await new Promise<void>((resolve) => (this.blocked = resolve));
    if (this.failure) throw this.failure;
  }

  /** The input is complete: the last block is compressed and finished. */
  end(): void {
    this.submit(this.block.subarray(0, this.used), true);
    this.ended = true;
    this.notify();
  }

  /** The writer failed: `output()` throws `error`. */
  fail(error: Error): void {
    this.failure = error;
    this.notify();
    this.release();
  }

  async *output(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, this.level === 9 ? 2 : this.level === 1 ? 4 : 0, OS_UNIX]);
      for (;;) {
        if (this.failure) throw this.failure;
        const job = this.jobs.shift();
        if (job !== undefined) {
          if (this.jobs.length < IN_FLIGHT) this.release();
          yield await job;
          continue;
        }
        if (this.ended) break;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(this.crc >>> 0, 0);
      trailer.writeUInt32LE(this.size % 2 ** 32, 4);
      yield trailer;
    } finally {
      // A reader that stops early (a destroyed stream) stops the writer too.
      if (!this.ended) this.fail(this.failure ?? new Error('bundle output closed'));
    }
  }

  /** The current block is full: it starts compressing, and the writer goes on in a fresh one. */
  private cut(): void {
    this.submit(this.block, false);
    this.block = this.spare.pop() ?? Buffer.allocUnsafe(GZIP_BLOCK_BYTES);
    this.used = 0;
    this.notify();
  }

  private release(): void {
    const blocked = this.blocked;
    this.blocked = undefined;
    blocked?.();
  }

  private submit(data: Buffer, last: boolean): void {
    this.crc = crc32(data, this.crc);
    this.size += data.length;
    const job = deflateBlock(data, this.level, last);
    // zlib has read the block once its job settles: only then may it be written again.
    job.then(
      () => {
        if (!last) this.spare.push(data);
      },
      () => undefined, // Observed by output(); never an unhandled rejection meanwhile.
    );
    this.jobs.push(job);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * One block, raw-deflated in the thread pool. Its output buffer has room for the whole
 * compressed block, so it is one trip through the pool and one output chunk, handed on
 * without a copy. zlib's default 16 KiB chunks took ~20 trips a block, each back through
 * the main thread (100 MiB: main thread active 10-11 s against 1.6-1.9 s), and
 * `zlib.deflateRaw` joins its chunks into a fresh buffer even when there is one.
 */
function deflateBlock(data: Buffer, level: number, last: boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const deflate = zlib.createDeflateRaw({
      level,
      finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
      chunkSize: Math.max(zlib.constants.Z_MIN_CHUNK, outputBound(data.length)),
    });
    deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
    deflate.on('error', reject);
    deflate.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    deflate.end(data);
  });
}

/** At least zlib's deflateBound for `bytes` of input, plus a sync-flush marker. */
function outputBound(bytes: number): number {
  return bytes + (bytes >> 12) + (bytes >> 14) + 64;
}

/** zlib's own crc32 where Node has it (20.15+), else a table-driven one. */
const crc32: (data: Buffer, value: number) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function'
    ? (zlib as unknown as { crc32: (data: Buffer, value: number) => number }).crc32
    : crc32Table;

let table: Uint32Array | undefined;
function crc32Table(data: Buffer, value: number): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = ~value >>> 0;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}
