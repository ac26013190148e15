import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

const deflateRaw = promisify(zlib.deflateRaw);

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
 * Write the input into `this` (a Writable); read the gzip from `output()`. Every chunk is
 * copied into a block before its write completes, so a writer may reuse its buffer at once.
 */
export class ParallelGzip extends Writable {
  /** Input blocks whose compression finished: reused, so a bundle churns a few MiB, not its size. */
  private readonly spare: Buffer[] = [];
  private block: Buffer = Buffer.allocUnsafe(GZIP_BLOCK_BYTES);
  private used = 0;
  private crc = 0;
  private size = 0;
  private readonly jobs: Promise<Buffer>[] = [];
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private blocked: (() => void) | undefined;

  constructor(private readonly level: number) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let offset = 0;
    while (offset < chunk.length) {
      const copied = chunk.copy(this.block, this.used, offset);
      this.used += copied;
      offset += copied;
      if (this.used === GZIP_BLOCK_BYTES) {
        this.submit(this.block, false);
        this.block = this.spare.pop() ?? Buffer.allocUnsafe(GZIP_BLOCK_BYTES);
        this.used = 0;
      }
    }
    this.notify();
    // Backpressure: hold the writer while enough blocks wait for the reader.
    if (this.jobs.length >= IN_FLIGHT) this.blocked = () => callback();
    else callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.submit(this.block.subarray(0, this.used), true);
    this.ended = true;
    this.notify();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.failure = error ?? new Error('gzip input closed early');
    this.notify();
    // The failure reaches the reader through output(); an 'error' event here would have no
    // listener and take the process down.
    callback();
  }

  async *output(): AsyncGenerator<Buffer> {
    yield Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, this.level === 9 ? 2 : this.level === 1 ? 4 : 0, OS_UNIX]);
    for (;;) {
      const job = this.jobs.shift();
      if (job !== undefined) {
        if (this.jobs.length < IN_FLIGHT && this.blocked) {
          const release = this.blocked;
          this.blocked = undefined;
          release();
        }
        yield await job;
        continue;
      }
      if (this.ended) break;
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(this.crc >>> 0, 0);
    trailer.writeUInt32LE(this.size % 2 ** 32, 4);
    yield trailer;
  }

  private submit(data: Buffer, last: boolean): void {
    this.crc = crc32(data, this.crc);
    this.size += data.length;
    const job = deflateRaw(data, {
      level: this.level,
      finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
    });
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
