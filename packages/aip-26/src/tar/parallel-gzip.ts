import * as zlib from 'node:zlib';
import { keepShape } from './keep-shape.js';
import { objectArray } from './object-array.js';
import { Waiter } from './waiter.js';

/** Bytes of the tar stream compressed as one independent block run. Fixed: part of the output's identity. */
export const GZIP_BLOCK_BYTES = 1 << 20;
/**
 * zlib's memLevel for every block: 9, zlib's fastest (a hash table of 64 Ki heads where 8 has
 * 32 Ki, so fewer match candidates collide). Part of the output's identity, with the level.
 * Measured single-threaded on 1 MiB blocks at level 6: a 31 MiB tar of generated source,
 * 1,750 ms of CPU at memLevel 8 and 1,664 ms at 9 (output 0.08% smaller); 71 MiB of real
 * JavaScript and TypeScript from node_modules, 1,493 ms and 1,418 ms (output 0.2% larger).
 */
const GZIP_MEM_LEVEL = 9;
/**
 * A block shorter than this may not deflate as a fresh stream would on a stream used before
 * (reset): zlib reads up to 258 bytes past the end of the input when it compares matches,
 * and zeroes them only in a fresh stream (its "high water" mark survives a reset). In a
 * window (2 x 32 KiB) the block did not fill, those bytes are left from the stream's earlier
 * blocks, so the same block could deflate to other bytes after other bundles (same length,
 * other matches: found in 1 of 300 short blocks after a random 1 MiB history). A block of
 * at least 2 x 32 KiB + 258 bytes writes its whole window itself. Only the last block of a
 * bundle can be short; it gets a fresh stream.
 */
const SHORT_BLOCK_BYTES = 2 * 32 * 1024 + 258;
/**
 * A deflate lane's output buffer: room for a whole compressed block (at least zlib's
 * deflateBound of GZIP_BLOCK_BYTES, plus a sync-flush marker), so a fresh stream never
 * fills it.
 */
export const LANE_OUTPUT_BYTES = Math.max(zlib.constants.Z_MIN_CHUNK, outputBound(GZIP_BLOCK_BYTES));
/**
 * How a block's output ends when zlib wrote its sync-flush marker twice (see DeflateLane):
 * the first marker's LEN 0 and NLEN 0xffff, then, from the byte boundary that left, an
 * empty stored block again (its header byte, LEN, NLEN).
 */
const REPEATED_FLUSH_MARKER = Buffer.from([0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xff]);
/** Blocks compressing at once: libuv's thread pool has 4 threads. */
const IN_FLIGHT = 4;
const OS_UNIX = 3;
/** The block of a ParallelGzip that finished. */
const NO_BLOCK = Buffer.alloc(0);
/** Idle blocks and deflate streams are kept this long after a bundle, for the next one. */
const KEEP_IDLE_MS = 10_000;
/** Blocks kept idle at most: those of one bundle in flight (IN_FLIGHT, the one being filled, the scratch). */
const KEEP_BLOCKS = IN_FLIGHT + 2;

/**
 * Blocks and deflate streams shared by the bundles of a process: a host that bundles again
 * reuses the memory of the last bundle instead of touching fresh pages. Measured on 2,000
 * files (29 MiB) in a warm process: 2,700-9,800 page faults a bundle (each a fresh page,
 * ~20-30 µs on this VM) with new blocks and streams every time, 2,300-6,400 with these kept
 * (the result buffer alone is ~2,150, and zlib's output buffers are fresh as ever).
 * Whatever is idle for 10 s is released; nothing here keeps the process alive.
 */
const shared = {
  blocks: [] as Buffer[],
  /**
   * Idle streams by level, and by whether their bundles lent their output: a stream whose
   * output a reader may keep (see ParallelGzip's `lends`) never rewinds over it later.
   */
  lanes: new Map<string, DeflateLane[]>(),
  timer: undefined as NodeJS.Timeout | undefined,

  block(): Buffer {
    return this.blocks.pop() ?? Buffer.allocUnsafe(GZIP_BLOCK_BYTES);
  },
  lane(level: number, lends: boolean, finishes: boolean): DeflateLane {
    return this.lanes.get(laneKey(level, lends, finishes))?.pop() ?? new DeflateLane(level, finishes);
  },
  /** Blocks and healthy lanes of a bundle that ended, kept for the next one. */
  keep(blocks: Buffer[], lanes: DeflateLane[], level: number, lends: boolean): void {
    for (const block of blocks) if (this.blocks.length < KEEP_BLOCKS) this.blocks.push(block);
    for (const lane of lanes) {
      const key = laneKey(level, lends, lane.finishes);
      const idle = this.lanes.get(key) ?? [];
      this.lanes.set(key, idle);
      // A bundle has one last block: one stream that finishes is enough to keep.
      if (idle.length < (lane.finishes ? 1 : IN_FLIGHT + 1)) idle.push(lane);
      else lane.close();
    }
    if (this.timer) this.timer.refresh();
    else {
      this.timer = setTimeout(() => this.release(), KEEP_IDLE_MS);
      this.timer.unref();
    }
  },
  release(): void {
    this.timer = undefined;
    this.blocks.length = 0;
    for (const lanes of this.lanes.values()) for (const lane of lanes.splice(0)) lane.close();
  },
};

function laneKey(level: number, lends: boolean, finishes: boolean): string {
  return `${level}${lends ? ' lent' : ''}${finishes ? ' last' : ''}`;
}

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
 *
 * Made with `lends` true, `output()` lends its chunks: each is valid until the reader asks
 * for the next one, and the reader copies what it keeps. A deflate stream then writes each
 * block at the start of its output buffer again, once the block before it was read (see
 * DeflateLane.deflate), so a bundle's compressed bytes go through the same few buffers
 * instead of fresh memory: 2,000 files (8.3 MiB out) touched ~2,100 fresh pages for them.
 */
export class ParallelGzip {
  /** Input blocks whose compression finished: reused, so a bundle churns a few MiB, not its size. */
  private readonly spare: Buffer[] = objectArray();
  private block: Buffer = shared.block();
  private used = 0;
  /** For data that straddles a cut: read whole here, then copied into the blocks. */
  private scratch: Buffer | undefined;
  private crc = 0;
  private size = 0;
  private readonly jobs: Promise<Buffer[]>[] = objectArray();
  /** Idle deflate streams, each used again for block after block (see DeflateLane). */
  private readonly lanes: DeflateLane[] = objectArray();
  /** With `lends`: the stream of each job, in order; idle again once the reader read its block. */
  private readonly lent: DeflateLane[] = objectArray();
  private ended = false;
  /** Blocks that went to compression. */
  private submitted = 0;
  /** Whether the output's reader stopped first: the writer's failure is then only a consequence. */
  private stoppedByReader = false;
  private failure: Error | undefined;
  /** The reader's wait for a block (see output). */
  private readonly outputWait = new Waiter();
  /** The writer's wait for room (see room). */
  private readonly roomWait = new Waiter();

  constructor(
    private readonly level: number,
    private readonly lends = false,
  ) {}

  /** Whether as many blocks went to compression as run at once: every deflate stream got work. */
  get started(): boolean {
    return this.submitted >= IN_FLIGHT;
  }

  /**
   * Whether the output stopped because its reader did (or a block failed to compress), not
   * because the writer failed: the writer then fails with an error that only says the output
   * closed, and the reader's is the one that tells what happened.
   */
  get closedByReader(): boolean {
    return this.stoppedByReader;
  }

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
    const target = this.overflowTarget(bytes);
    await read(target);
    this.append(target);
  }

  /** `fill`, for a reader that reads synchronously (an OpenedFile). */
  fillFrom(bytes: number, file: { readInto(target: Buffer): void }): void {
    const view = this.reserve(bytes);
    if (view) {
      file.readInto(view);
      this.commit(bytes);
      return;
    }
    const target = this.overflowTarget(bytes);
    file.readInto(target);
    this.append(target);
  }

  /** Where `bytes` bytes that do not fit before the next cut are read whole, to be copied in. */
  private overflowTarget(bytes: number): Buffer {
    if (bytes > GZIP_BLOCK_BYTES) return Buffer.allocUnsafe(bytes);
    this.scratch ??= shared.block();
    return this.scratch.subarray(0, bytes);
  }

  /**
   * Resolves when the writer may go on: fewer than IN_FLIGHT blocks wait for the reader.
   * Rejects once the output failed or its reader stopped, so the writer reads no further.
   */
  async room(): Promise<void> {
    if (this.jobs.length >= IN_FLIGHT && !this.failure) await this.roomWait.wait();
    if (this.failure) throw this.failure;
  }

  /** The input is complete: the last block is compressed and finished. */
  end(): void {
    // Once the output failed, nothing more goes to compression.
    if (this.failure === undefined) this.submit(this.block.subarray(0, this.used), true);
    this.ended = true;
    this.notify();
  }

  /** The writer failed: `output()` throws `error`. */
  fail(error: Error): void {
    this.failure = error;
    this.closeLanes();
    // Lent streams whose block was not read: closed once their job ends (never while zlib
    // works on it), which may be at once. They are the streams of the last jobs: the reader
    // shifts both lists, a failure empties `lent` alone.
    const lent = this.lent.splice(0);
    const first = this.jobs.length - lent.length;
    for (let i = 0; i < lent.length; i++) {
      const lane = lent[i]!;
      this.jobs[first + i]?.then(
        () => lane.close(),
        () => {},
      );
    }
    this.notify();
    this.release();
  }

  /**
   * The gzip, in chunks: views of the deflate streams' output buffers. Without `lends`, zlib
   * never writes them again; with it, a chunk is valid until the next is asked for.
   */
  async *output(): AsyncGenerator<Buffer> {
    // With `lends`: the stream whose chunks the reader has.
    let reading: DeflateLane | undefined;
    let finished = false;
    try {
      yield Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, this.level === 9 ? 2 : this.level === 1 ? 4 : 0, OS_UNIX]);
      for (;;) {
        if (this.failure) throw this.failure;
        const job = this.jobs.shift();
        if (job !== undefined) {
          reading = this.lent.shift();
          if (this.jobs.length < IN_FLIGHT) this.release();
          yield* await job;
          // The reader asked for what comes next: it is done with this block's chunks.
          if (reading) {
            if (this.failure) reading.close();
            else this.lanes.push(reading);
            reading = undefined;
          }
          continue;
        }
        if (this.ended) break;
        await this.outputWait.wait();
      }
      this.keepForNext();
      finished = true;
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(this.crc >>> 0, 0);
      trailer.writeUInt32LE(this.size % 2 ** 32, 4);
      yield trailer;
    } finally {
      // A reader that stops early (a destroyed stream, a failed write of its own, a block that
      // failed to compress) stops the writer too, and the streams of blocks it did not read
      // are closed.
      if (!finished) {
        if (this.failure === undefined) this.stoppedByReader = true;
        this.fail(this.failure ?? new Error('bundle output closed'));
      }
      // Its job has ended here (the generator stops only at a yield, or when the job failed).
      reading?.close();
    }
  }

  /** The current block is full: it starts compressing, and the writer goes on in a fresh one. */
  private cut(): void {
    if (this.failure !== undefined) {
      // Nothing more goes to compression once the output failed (a read that ended after a
      // stop): the block is written over until the writer sees the failure.
      this.used = 0;
      return;
    }
    this.submit(this.block, false);
    this.block = this.spare.pop() ?? shared.block();
    this.used = 0;
    this.notify();
  }

  private release(): void {
    this.roomWait.wake();
  }

  private submit(data: Buffer, last: boolean): void {
    this.submitted++;
    this.crc = crc32(data, this.crc);
    this.size += data.length;
    // A block shorter than the deflate window (only the last can be) gets a fresh stream: see
    // SHORT_BLOCK_BYTES. The last block goes to a stream that finishes (see DeflateLane).
    const lane =
      data.length < SHORT_BLOCK_BYTES
        ? new DeflateLane(this.level, true)
        : last
          ? shared.lane(this.level, this.lends, true)
          : (this.lanes.pop() ?? shared.lane(this.level, this.lends, false));
    const block = last ? this.block : data;
    const job = lane.deflate(data, last, this.lends);
    // zlib has read the block once its job settles: only then may it, and its lane, be used
    // again (a lent lane once the reader read the block, too: see output).
    job.then(
      () => {
        this.spare.push(block);
        if (this.failure) lane.close();
        else if (!this.lends) this.lanes.push(lane);
      },
      () => lane.close(), // Observed by output(); never an unhandled rejection meanwhile.
    );
    this.jobs.push(job);
    if (this.lends) this.lent.push(lane);
  }

  private closeLanes(): void {
    for (const lane of this.lanes.splice(0)) lane.close();
  }

  /** Every job has settled (the output read them all): blocks and lanes go to the next bundle. */
  private keepForNext(): void {
    const blocks = this.spare.splice(0);
    if (this.scratch) blocks.push(this.scratch);
    this.scratch = undefined;
    shared.keep(blocks, this.lanes.splice(0), this.level, this.lends);
    // The last block went to the shared ones with the spares: this one holds no memory now.
    this.block = NO_BLOCK;
    // Without it, after a full collection between two bundles, the next one compiled
    // `reserve`, `commit`, `fill` and the tar writer that inlines them again.
    keepShape(this);
  }

  private notify(): void {
    this.outputWait.wake();
  }
}

/**
 * A raw deflate stream used for one block after another: each block is written and flushed
 * (a sync flush, or the finish for the last one), then the stream is reset, so the next
 * block starts a new independent deflate exactly as a fresh stream would: the same bytes,
 * for a block that fills the window (see SHORT_BLOCK_BYTES) and whose flush marker is
 * written once (see `deflate`). One stream per lane, not one per block: a fresh zlib stream
 * allocates its state and a 1 MiB output buffer, which on 29 blocks of 1 MiB was 29 states
 * and 29 buffers of fresh memory, and the external memory they report made V8 run full
 * collections.
 *
 * Its output buffer has room for a whole compressed block, and a block is written with its
 * sync flush (the stream's flush mode), so a block is one trip through the thread pool and,
 * as a rule, one output chunk: a view of that buffer, handed on without a copy. zlib's
 * default 16 KiB chunks took ~20 trips a block, each back through the main thread (100 MiB:
 * main thread active 10-11 s against 1.6-1.9 s); a write and then a flush took two, and two
 * or three chunks (2,000 files: 84 writes of the bundle file, 34 now). zlib's output depends
 * on the input and where it is flushed, not on the calls that bring them: the same bytes.
 *
 * The last block goes to a stream made with `finishes`, in zlib's default flush mode: the
 * block is written, then finished (Z_FINISH). In sync flush mode, a marker would come
 * before the finish: other bytes.
 */
export class DeflateLane {
  private readonly stream: zlib.DeflateRaw;
  private chunks: Buffer[] = [];
  private failed: ((error: Error) => void) | undefined;
  private closed = false;

  constructor(
    private readonly level: number,
    readonly finishes = false,
  ) {
    this.stream = zlib.createDeflateRaw({
      level,
      memLevel: GZIP_MEM_LEVEL,
      chunkSize: LANE_OUTPUT_BYTES,
      flush: finishes ? zlib.constants.Z_NO_FLUSH : zlib.constants.Z_SYNC_FLUSH,
    });
    this.stream.on('data', (chunk: Buffer) => this.chunks.push(chunk));
    this.stream.on('error', (error: Error) => this.failed?.(error));
  }

  /**
   * The block's compressed bytes: views of the stream's output buffer. Without `rewind`,
   * zlib never writes them again (it moves on to a fresh buffer when one is full). With
   * `rewind`, for a caller done with the last block's chunks, the block is written from the
   * buffer's start, over them: one buffer serves block after block, and, since it has room
   * for a whole block, no marker ever reaches its end (below).
   *
   * Without `rewind`, a used stream writes each block after the output of the blocks before it, so its buffer
   * fills at offsets a fresh stream never reaches. When a sync flush's marker ends at the
   * end of the buffer, exactly or with up to 4 of its 5 bytes still to write, zlib returns
   * for more room, Node calls it again with the same flush, and zlib writes the rest and then
   * a second marker: 5 more bytes, after which the output is still valid but no longer the
   * bytes a fresh stream gives (measured: a block deflated after one whose output left
   * exactly its size of room came out 525,158 bytes, not 525,153; the same with 1 to 4
   * bytes less room). Which stream a block lands on, and where in its buffer, depends on
   * timing, so such a block made a bundle's digest vary from run to run. A block whose
   * output spans buffers and ends in two markers is deflated again on a fresh stream, which
   * its whole output fits. A block that ends so without a repeat (its compressed data ending
   * in the bytes of a marker) gets the same bytes again that way, only later. `again:
   * false` is that fresh stream's call: it is not deflated a third time.
   */
  deflate(data: Buffer, last: boolean, rewind: boolean, again = true): Promise<Buffer[]> {
    return new Promise((resolve, reject) => {
      this.failed = reject;
      if (rewind) this.rewind();
      const flushed = (error?: Error | null) => {
        if (error) return reject(error);
        // Closed while zlib worked on the flush: Node still calls back, without an error, and
        // a reset of the closed stream would throw an uncaught internal assertion.
        if (this.closed) return reject(new Error('deflate stream closed'));
        const chunks = this.chunks;
        this.chunks = [];
        this.failed = undefined;
        this.stream.reset();
        if (again && !last && chunks.length > 1 && endsWith(chunks, REPEATED_FLUSH_MARKER)) {
          const fresh = new DeflateLane(this.level, this.finishes);
          fresh
            .deflate(data, last, false, false)
            .then(resolve, reject)
            .finally(() => fresh.close());
          return;
        }
        resolve(chunks);
      };
      if (this.finishes) {
        this.stream.write(data);
        this.stream.flush(last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH, flushed as () => void);
      } else {
        if (last) throw new Error('the last block goes to a stream made to finish');
        this.stream.write(data, flushed);
      }
    });
  }

  close(): void {
    this.closed = true;
    this.stream.close();
  }

  /**
   * The next block's output starts at the start of the output buffer, over the last block's,
   * which the caller no longer reads. Node's zlib streams write each output after the one
   * before it and move to a fresh buffer when one is full (`_outBuffer`, `_outOffset`:
   * fields of Node's own, the same from Node 10 to 25); a stream without them, or with a
   * buffer of another size, is left as it is, and writes where it would have.
   */
  private rewind(): void {
    const stream = this.stream as unknown as { _outBuffer?: unknown; _outOffset?: unknown };
    if (
      typeof stream._outOffset === 'number' &&
      Buffer.isBuffer(stream._outBuffer) &&
      stream._outBuffer.length === LANE_OUTPUT_BYTES
    )
      stream._outOffset = 0;
  }
}

/** Whether the bytes of `chunks`, one after another, end with `tail` (which may span chunks). */
function endsWith(chunks: readonly Buffer[], tail: Buffer): boolean {
  let left = tail.length;
  for (let i = chunks.length - 1; i >= 0 && left > 0; i--) {
    const chunk = chunks[i]!;
    const n = Math.min(left, chunk.length);
    if (chunk.compare(tail, left - n, left, chunk.length - n, chunk.length) !== 0) return false;
    left -= n;
  }
  return left === 0;
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
