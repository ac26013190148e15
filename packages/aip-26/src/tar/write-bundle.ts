import { Readable, type Writable } from 'node:stream';
import { pack as tarPack, type Header, type Pack } from 'tar-stream';
import { planBundle, type BundleEntry, type TarItem } from './bundle-plan.js';
import { BundleEntryError } from './errors.js';
import { GZIP_BLOCK_BYTES, ParallelGzip } from './parallel-gzip.js';

/**
 * Deterministic bundle archives. The same set of entries gives the same bytes in every run
 * and process:
 *
 * - entries are in the order of GNU tar `--sort=name` (the reproducible-builds convention),
 *   whatever order they came in: names compared segment by segment by their UTF-8 bytes, so
 *   `x/` and its subtree come before `x-y.txt` and `x.txt` (see `sortInArchiveOrder` in
 *   content-cache, the one order of every archive the SDK writes). A bundle lists, entry for
 *   entry, what `tar -c --sort=name` lists for its files on disk;
 * - every parent folder gets an explicit directory entry (mode 0755, name ending in "/"),
 *   right before the folder's subtree;
 * - mtime 0 (1970-01-01T00:00:00Z), uid and gid 0, empty uname and gname, modes 0644 or
 *   0755 and nothing else (no setuid, setgid or sticky bit);
 * - POSIX ustar headers, with a pax extended header (type "x", path record only) for an entry
 *   whose name ustar cannot hold: longer than its 100-byte name + 155-byte prefix split, or
 *   not ASCII. pax `path` is UTF-8 by definition, so every reader decodes such a name the
 *   same way, whatever its locale; a UTF-8 ustar name would be read in the reader's locale.
 *   No global pax header, no other pax record (no atime/ctime, which would vary);
 * - gzip at a fixed level (6 unless asked: the level of `gzip` and of GNU `tar -z`), header
 *   mtime 0, no name, OS byte 3 (Unix) on every platform; compressed in independent 1 MiB
 *   blocks on every core (see parallelGzip), cut at fixed offsets of the tar stream.
 *
 * The tar bytes are the same on every platform. The deflate stream is the same for the same
 * zlib build; a different zlib (another Node release, another platform's build) may choose
 * other matches for the same input, so digest the bundle where you build it.
 */

/** Pinned header values. */
const EPOCH = new Date(0);
export const DEFAULT_GZIP_LEVEL = 6;

/**
 * The archive layout: raise it whenever the same entries would give other bytes (the entry
 * order, a header field). Stores that keep finished bundles put it in their keys, so a bundle
 * made by an earlier layout is never handed out as if this writer had made it. 2: GNU tar
 * `--sort=name` order (1 sorted full paths by their bytes).
 */
export const BUNDLE_LAYOUT = 2;

/**
 * tar-stream emits a 512-byte header, the data and the padding as separate chunks: ~3 per
 * file. They are copied into 1 MiB batches before they reach the compressor (10,000 files:
 * 30,000 writes become ~110; with a single zlib stream, 6.7 s became 4.0 s). Data this
 * large or larger is written as it is, without a copy.
 */
const BATCH_BYTES = 1 << 20;

export interface WriteBundleOptions {
  /** gzip level, 0-9. Default 6. Part of the output's identity: a bundle's digest depends on it. */
  level?: number;
}

export type BundleEntries = Iterable<BundleEntry> | AsyncIterable<BundleEntry>;

/**
 * Packs the entries into a deterministic tar.gz. Refuses (BundleEntryError) an invalid
 * path, a path given twice, and a file that is also a folder of another entry.
 *
 * Entry data is never copied as a whole: headers and small files pass through reused 1 MiB
 * batches on their way into zlib, and the compressed output is written into one buffer sized
 * from the archive's bound. Measured for 10,000 files (103 MiB in, 63 MiB out): peak RSS
 * 87-99 MiB above the entries, where joining output chunks at the end gave 134-140 MiB. The
 * returned Buffer may be a view of that larger, zero-filled allocation: its pages past
 * `length` were never touched, so they use address space, not memory.
 */
export async function writeBundle(entries: BundleEntries, options: WriteBundleOptions = {}): Promise<Buffer> {
  const level = checkLevel(options.level);
  const items = planBundle(await collect(entries));
  const output = new OutputBuffer(gzipBound(tarBound(items)));
  for await (const chunk of gzipTar(items, level)) output.append(chunk as Buffer);
  return output.bytes();
}

/**
 * The same bytes as `writeBundle`, as a stream: for a host that uploads or hashes the bundle
 * as it is made. Input errors (BundleEntryError) arrive as the stream's error.
 */
export function bundleStream(entries: BundleEntries, options: WriteBundleOptions = {}): Readable {
  const level = checkLevel(options.level);
  async function* bundle(): AsyncGenerator<Buffer> {
    const items = planBundle(await collect(entries));
    yield* gzipTar(items, level);
  }
  return Readable.from(bundle(), { objectMode: false });
}

function checkLevel(level: number | undefined): number {
  if (level === undefined) return DEFAULT_GZIP_LEVEL;
  if (!Number.isInteger(level) || level < 0 || level > 9)
    throw new RangeError(`gzip level must be an integer 0-9, got ${level}`);
  return level;
}

/** Entries are sorted, so all of them are needed before the first byte: collect references. */
async function collect(entries: BundleEntries): Promise<BundleEntry[]> {
  if (Array.isArray(entries)) return entries as BundleEntry[];
  const all: BundleEntry[] = [];
  for await (const entry of entries) all.push(entry);
  return all;
}

/** The gzipped tar of `items`, as a stream that starts packing at once. */
function gzipTar(items: readonly TarItem[], level: number): Readable {
  const gzip = new ParallelGzip(level);
  writeTar(items, gzip).then(
    () => gzip.end(),
    (error: unknown) => gzip.destroy(error as Error),
  );
  return Readable.from(gzip.output(), { objectMode: false });
}

/** Writes the tar stream of `items` into `sink` (without ending it), honouring backpressure. */
async function writeTar(items: readonly TarItem[], sink: Writable): Promise<void> {
  const pack = tarPack();
  const buffers = new ReadBuffers();
  let addError: unknown;
  const adding = addEntries(pack, items, buffers).catch((error: unknown) => {
    addError = error;
    pack.destroy(error as Error);
  });
  const batch = new Batcher(sink);
  try {
    for await (const chunk of pack) {
      await batch.write(chunk as Buffer);
      // Its bytes are copied now (into a batch, or into the compressor's block).
      buffers.consumed(chunk as Buffer);
    }
    await adding;
    if (addError !== undefined) throw addError;
    await batch.flush();
  } catch (error) {
    // Stops tar-stream and fails any entry still waiting, so `adding` settles.
    pack.destroy();
    await adding;
    throw addError ?? error;
  }
}

/** Adds one entry at a time: tar-stream then holds one entry's data, not all of them queued. */
async function addEntries(pack: Pack, items: readonly TarItem[], buffers: ReadBuffers): Promise<void> {
  for (const item of items) {
    // A lazily read file is read only now, just before it is packed, and must still have the
    // size it had when the archive was laid out.
    const data = await contentOf(item, buffers);
    if (item.read && data?.length !== item.size) {
      throw new BundleEntryError(
        'size-changed',
        item.name,
        `was ${item.size} bytes when the bundle was planned, ${data?.length} when read`,
      );
    }
    const header: Partial<Header> & Pick<Header, 'name'> = {
      name: item.name,
      type: item.type,
      mode: item.mode,
      size: data?.length ?? 0,
      mtime: EPOCH,
      uid: 0,
      gid: 0,
      uname: '',
      gname: '',
    };
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (data === undefined) pack.entry(header, done);
      else pack.entry(header, data, done);
    });
  }
  pack.finalize();
}

async function contentOf(item: TarItem, buffers: ReadBuffers): Promise<Buffer | undefined> {
  if (item.data !== undefined || !item.read) return item.data;
  const target = item.readInto && item.size > 0 ? buffers.take(item.size) : undefined;
  if (!target) return item.read();
  await item.readInto!(target);
  return target;
}

/** Largest file read into a reused buffer, and how many such buffers may be in flight. */
const READ_BUFFER_BYTES = 1 << 20;
const READ_BUFFERS = 8;

/**
 * Reused buffers for lazily read files. Reading every file into a new Buffer left a
 * bundle's worth of garbage that V8 collects only after ~64 MiB of growth; here a file is
 * read into one of a few buffers, handed to tar-stream (which passes that very Buffer on as
 * a chunk), and the buffer is free again once the consumer has copied that chunk. A file
 * too large, or all buffers in flight, gets a fresh Buffer as before.
 */
class ReadBuffers {
  private readonly free: Buffer[] = [];
  /** Views handed out, oldest first, with the buffer each is a view of. */
  private readonly lent: { view: Buffer; whole: Buffer }[] = [];

  take(size: number): Buffer | undefined {
    if (size > READ_BUFFER_BYTES || this.lent.length >= READ_BUFFERS) return undefined;
    const whole = this.free.pop() ?? Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const view = whole.subarray(0, size);
    this.lent.push({ view, whole });
    return view;
  }

  /** Called with every chunk once it is copied; frees the buffer whose view it is. */
  consumed(chunk: Buffer): void {
    const index = this.lent.findIndex((loan) => loan.view === chunk);
    if (index === -1) return;
    const [loan] = this.lent.splice(index, 1);
    this.free.push(loan!.whole);
  }
}

/**
 * Copies small chunks into 1 MiB batches for zlib; passes large ones through. A batch is
 * reused once zlib has consumed it (its write callback), so the batches in use stay at the
 * few zlib has queued instead of 100 MiB of garbage waiting for a GC.
 */
class Batcher {
  private readonly spare: Buffer[] = [];
  private buffer: Buffer = Buffer.allocUnsafe(BATCH_BYTES);
  private used = 0;
  constructor(private readonly sink: Writable) {}

  async write(chunk: Buffer): Promise<void> {
    if (chunk.length >= BATCH_BYTES) {
      await this.flush();
      await this.send(chunk, undefined);
      return;
    }
    let offset = 0;
    while (offset < chunk.length) {
      const copied = chunk.copy(this.buffer, this.used, offset);
      this.used += copied;
      offset += copied;
      if (this.used === BATCH_BYTES) await this.flush();
    }
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    const full = this.buffer;
    const used = this.used;
    // Never the one zlib holds: it reads a batch until its write callback.
    this.buffer = this.spare.pop() ?? Buffer.allocUnsafe(BATCH_BYTES);
    this.used = 0;
    await this.send(full.subarray(0, used), full);
  }

  private async send(chunk: Buffer, batch: Buffer | undefined): Promise<void> {
    if (this.sink.destroyed) throw new Error('bundle output closed');
    const consumed = batch === undefined ? undefined : () => this.spare.push(batch);
    if (!this.sink.write(chunk, consumed)) await drained(this.sink);
  }
}

/** Resolves on 'drain'; rejects if the stream fails or closes first, so a writer never hangs. */
function drained(stream: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(new Error('bundle output closed'));
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** At least the tar size of `items` (a pax header is counted for every name that might need one). */
function tarBound(items: readonly TarItem[]): number {
  let bytes = 1024; // end-of-archive marker
  for (const item of items) {
    const size = item.size;
    bytes += 512 + roundUp512(size);
    const nameBytes = Buffer.byteLength(item.name);
    if (nameBytes > 100 || nameBytes !== item.name.length) bytes += 1024 + roundUp512(nameBytes + 32);
  }
  return bytes;
}

/** At least zlib's deflateBound for gzip output of `bytes` input (stored blocks, header, trailer). */
function gzipBound(bytes: number): number {
  // deflateBound per block, plus a sync-flush marker and a block header for each block.
  return bytes + (bytes >> 11) + Math.ceil(bytes / GZIP_BLOCK_BYTES) * 64 + 1024;
}

function roundUp512(n: number): number {
  return Math.ceil(n / 512) * 512;
}

/**
 * Collects the compressed output in one buffer allocated at its bound up front, instead of
 * chunks joined at the end, which would hold the bundle twice for a moment. `Buffer.alloc`
 * of a large size maps fresh zero pages; only the pages written become resident.
 */
class OutputBuffer {
  private buffer: Buffer;
  private length = 0;
  constructor(bound: number) {
    this.buffer = Buffer.alloc(bound);
  }
  append(chunk: Buffer): void {
    if (this.length + chunk.length > this.buffer.length) {
      // Not expected (the bound holds for zlib), but never wrong: grow.
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + chunk.length));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += chunk.copy(this.buffer, this.length);
  }
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}
