import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { Readable } from 'node:stream';
import { archiveOrderKey } from '@agentproto/archive';
import {
  type BundleEntry,
  type OpenedLaterEntry,
  type TarItem,
  bundlePathProblem,
  directoryItem,
  fileItem,
  fileMode,
  openedLaterItem,
  planBundle,
} from './bundle-plan.js';
import { BundleEntryError } from './errors.js';
import { keepShape } from './keep-shape.js';
import { objectArray } from './object-array.js';
import { GZIP_BLOCK_BYTES, ParallelGzip } from './parallel-gzip.js';
import { Waiter } from './waiter.js';
import { headerBytes, writeHeader } from './tar-header.js';

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
 * - gzip at a fixed level (6 unless asked: the level of `gzip` and of GNU `tar -z`) and
 *   zlib memLevel 9 (the fastest; see GZIP_MEM_LEVEL in parallel-gzip), header
 *   mtime 0, no name, OS byte 3 (Unix) on every platform; compressed in independent 1 MiB
 *   blocks on every core (see parallelGzip), cut at fixed offsets of the tar stream.
 *
 * The tar bytes are the same on every platform. The deflate stream is the same for the same
 * zlib build; a different zlib (another Node release, another platform's build) may choose
 * other matches for the same input, so digest the bundle where you build it.
 */

export const DEFAULT_GZIP_LEVEL = 6;

/**
 * The archive layout: raise it whenever the same entries would give other bytes (the entry
 * order, a header field, the deflate parameters). Stores that keep finished bundles put it in
 * their keys, so a bundle made by an earlier layout is never handed out as if this writer had
 * made it. 3: zlib memLevel 9 (2 deflated at memLevel 8). 2: GNU tar `--sort=name` order (1
 * sorted full paths by their bytes).
 */
export const BUNDLE_LAYOUT = 3;

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
  return (await writeBundleDigested(entries, options, false)).bundle;
}

/**
 * `writeBundle`, with the SHA-256 of its bytes when `digest` is true, hashed block by block
 * as they come out of the compressor (on the main thread while the pool compresses the
 * next blocks). A caller that returns the bundle alone does not hash it (10,000 files:
 * 28 MiB of output, ~18 ms of the main thread).
 */
export async function writeBundleDigested(
  entries: BundleEntries,
  options: WriteBundleOptions,
  digest: boolean,
): Promise<{ bundle: Buffer; sha256: string | undefined }> {
  const { output, sha256 } = await writeBundleTo(entries, options, digest, memorySink);
  return { bundle: output, sha256 };
}

/** `writeBundleDigested`, its bytes going to the sink `makeSink` gives (told the archive's bound). */
export async function writeBundleTo<T>(
  entries: BundleEntries,
  options: WriteBundleOptions,
  digest: boolean,
  makeSink: SinkFactory<T>,
): Promise<{ output: T; sha256: string | undefined }> {
  const level = checkLevel(options.level);
  const items = planBundle(await collect(entries));
  const bound = gzipBound(tarBound(items));
  const sink = makeSink(() => bound);
  const hash = digest ? createHash('sha256') : undefined;
  // Each chunk is lent until the next is asked for: the sink and the hash are done with it by then.
  for await (const chunk of packTar(items, level, true).output()) {
    sink.write(chunk);
    hash?.update(chunk);
  }
  return { output: sink.finish(), sha256: hash?.digest('hex') };
}

/**
 * Where a bundle's compressed bytes go, chunk by chunk in order, and what it gives once they
 * are all there: the bundle in memory, or the number of bytes written to a file.
 */
export interface BundleSink<T> {
  /** `chunk` is lent for the call: a sink that keeps it keeps a copy. */
  write(chunk: Buffer): void;
  finish(): T;
}

/**
 * Makes the sink of one bundle. `bound` is at least the gzip's size once every entry is
 * known, undefined before (a writer that packs while entries are still coming).
 */
export type SinkFactory<T> = (bound: () => number | undefined) => BundleSink<T>;

/**
 * The bundle in memory (see OutputBuffer): sized from the bound when it is known by the
 * first chunk, else filled provisionally and sized at the end.
 */
export const memorySink: SinkFactory<Buffer> = (bound) => {
  let output: OutputBuffer | undefined;
  let finished = false;
  return {
    write(chunk) {
      output ??= new OutputBuffer(bound());
      output.append(chunk, bound);
    },
    finish() {
      if (finished) throw new Error('bundle finished twice');
      if (bound() === undefined) throw new Error('bundle finished before its entries were all known');
      // The bundle is its caller's now: the sink (which a writer kept for its shape may hold) lets go of it.
      finished = true;
      const bytes = output?.bytes() ?? Buffer.alloc(0);
      output = undefined;
      return bytes;
    },
  };
};

/**
 * The bundle written to the open file `fd` from offset 0, each chunk as it is compressed (a
 * positioned write on the calling thread: the thread pool is busy compressing); `finish()`
 * gives the bytes written. Never holds the bundle: a chunk is written, then let go.
 */
export function fileSink(fd: number): SinkFactory<number> {
  return () => {
    let position = 0;
    return {
      write(chunk) {
        for (let done = 0; done < chunk.length; )
          done += writeSync(fd, chunk, done, chunk.length - done, position + done);
        position += chunk.length;
      },
      finish: () => position,
    };
  };
}

/**
 * The same bytes as `writeBundle`, as a stream: for a host that uploads or hashes the bundle
 * as it is made. Input errors (BundleEntryError) arrive as the stream's error.
 */
export function bundleStream(entries: BundleEntries, options: WriteBundleOptions = {}): Readable {
  const level = checkLevel(options.level);
  async function* bundle(): AsyncGenerator<Buffer> {
    const items = planBundle(await collect(entries));
    // Not lent: the stream's reader may keep the chunks it is given.
    yield* packTar(items, level, false).output();
  }
  return Readable.from(bundle(), { objectMode: false });
}

/**
 * How far the listing may run ahead of the writer (in entries) until every deflate stream
 * has its first block; it goes on again once it is half that ahead. A listing running free
 * took the main thread from the reads that fill the first blocks while the other core
 * waited for them: in a fresh process, 2,000 files, the first block went to compression
 * 33 ms after the first file was opened and the fourth 131 ms after; paced, 23 and 66 ms.
 */
const LEAD_ENTRIES = 16;

/** What OrderedBundleWriter keeps of the entry it added last: its archive order key, its name, whether it is a file. */
interface LastEntry {
  key: Buffer;
  name: string;
  file: boolean;
}

/**
 * Made by one function, the one before a writer's first entry included: objects of one
 * shape, whose fields hold the same kinds of values in every bundle. (Holding the entry
 * itself, a folder's or a file's, whose shapes differ, the check of the entry before a
 * folder, compiled against the shapes the first bundle gave it, met another at the next
 * bundle's first entry, and its code was thrown away.)
 */
function lastEntry(key: Buffer, name: string, file: boolean): LastEntry {
  return { key, name, file };
}

/**
 * A bundle packed while its entries are still being found. A workspace folder is listed
 * name by name, depth-first, which is the archive's own order: its first blocks can be
 * compressing while the rest is listed, instead of one core listing while the others wait
 * (10,000 files: ~200 ms of listing and planning before the first block, most of a core
 * idle meanwhile).
 *
 * It writes the bytes `writeBundleDigested` writes for the same entries, or none: an entry
 * that does not come strictly after the one before it in archive order (`archiveOrderKey`,
 * parent folders included), or that `planBundle` would refuse (an invalid path, a file that
 * is also a folder), makes it `declined`; it stops, and the caller writes the bundle the
 * usual way, which sorts, checks and reports as always.
 */
export class OrderedBundleWriter<T = Buffer> {
  private readonly gzip: ParallelGzip;
  private readonly sink: BundleSink<T>;
  private readonly queue: TarItem[] = objectArray();
  private next = 0;
  /** Folders whose entry is written or queued. */
  private readonly folders = new Set<string>();
  /**
   * The last entry added; before the first, one that comes before every other (an empty
   * key) and is not a file. Never unset: `add`, compiled while a long bundle ran,
   * had met it unset only at the bundle's first entry, before V8 kept type feedback, and the
   * next bundle threw that code away at its first entry.
   */
  private last: LastEntry = lastEntry(Buffer.alloc(0), '', false);
  private tarBytes = 1024; // end-of-archive marker
  /** Opened-later entries queued or being written: their size is not in `tarBytes` yet. */
  private unmeasured = 0;
  // Both are set false in the constructor (see there).
  private ended = true;
  private stopped = true;
  /** Whether the listing may still be made to wait (see pace); set true in the constructor. */
  private pacesListing = false;
  /** The writer's wait for an entry (see write). */
  private readonly entryWait = new Waiter();
  /** The listing's wait (see pace). */
  private readonly listingWait = new Waiter();
  private readonly written: Promise<void>;
  /** The bundle's SHA-256 (undefined when made without), once the sink has every chunk. */
  private readonly collected: Promise<string | undefined>;

  /**
   * With `digest` false, `result()` gives no SHA-256 and the output is not hashed. The bytes
   * go to the sink `makeSink` gives (default: one buffer in memory).
   */
  constructor(
    options: WriteBundleOptions = {},
    private readonly digest = true,
    makeSink: SinkFactory<T> = memorySink as unknown as SinkFactory<T>,
  ) {
    // Written a second time, with another value, before anything reads them: V8 then knows
    // from the start that these fields change. Otherwise the first `end()` (the first
    // bundle's) changed a field V8 had taken for a constant, and threw away the code it had
    // compiled reading it (`add`, on every entry), to compile it again in the next bundle.
    this.ended = false;
    this.stopped = false;
    this.pacesListing = true;
    const level = checkLevel(options.level);
    // The sink first: one that cannot be made (a file that cannot be created) takes no compressor.
    // The bound is known once every entry is in and every opened-later one was measured.
    this.sink = makeSink(() => (this.ended && this.unmeasured === 0 ? gzipBound(this.tarBytes) : undefined));
    // Lends its output: collect() hands each chunk to the sink and the hash, which are done with it at once.
    this.gzip = new ParallelGzip(level, true);
    this.written = this.write();
    this.collected = this.collect();
    // Observed by result(); never an unhandled rejection meanwhile.
    this.written.catch(() => {});
    this.collected.catch(() => {});
  }

  /** True once an entry came out of order or would be refused: nothing more is written. */
  get declined(): boolean {
    return this.stopped;
  }

  /**
   * The next entry, with its parent folders' entries before it when they are new. An
   * OpenedLaterEntry is opened when the archive reaches it: its header takes the size and
   * mode of the descriptor its bytes are read through.
   */
  add(entry: BundleEntry | OpenedLaterEntry): void {
    if (this.stopped || this.ended) return;
    if (bundlePathProblem(entry.path) !== undefined) {
      this.stop();
      return;
    }
    const items: TarItem[] = [];
    // A folder is written after its parents: when the entry's own folder is written, so are
    // all of its parents, and only the entry itself is new.
    const folderEnd = entry.path.lastIndexOf('/');
    if (folderEnd !== -1 && !this.folders.has(entry.path.slice(0, folderEnd))) {
      for (let slash = entry.path.indexOf('/'); slash !== -1; slash = entry.path.indexOf('/', slash + 1)) {
        const folder = entry.path.slice(0, slash);
        if (!this.folders.has(folder)) items.push(directoryItem(folder));
      }
    }
    items.push('open' in entry ? openedLaterItem(entry) : fileItem(entry));
    for (const item of items) {
      const key = archiveOrderKey(item.name);
      if (Buffer.compare(key, this.last.key) <= 0) {
        this.stop();
        return;
      }
      // A file that is also a folder: in archive order, the folder comes right after it.
      if (item.type === 'directory' && this.last.file && this.last.name === item.name.slice(0, -1)) {
        this.stop();
        return;
      }
      this.last = lastEntry(key, item.name, item.type === 'file');
    }
    for (const item of items) {
      if (item.type === 'directory') this.folders.add(item.name.slice(0, -1));
      if (item.open !== undefined) this.unmeasured++;
      else this.tarBytes += itemBound(item);
      this.queue.push(item);
    }
    this.notify();
  }

  /**
   * What the lister awaits before its next entry, if anything. Until every deflate stream has
   * its first block, the listing stays at most LEAD_ENTRIES ahead of what is written, so the
   * reads that fill those blocks get the main thread (see LEAD_ENTRIES); after that, it runs
   * ahead freely.
   */
  pace(): Promise<void> | undefined {
    if (!this.pacesListing) return undefined;
    if (this.listingWait.waiting) return this.listingWait.wait();
    if (this.gzip.started) {
      this.letListingOn(true);
      return undefined;
    }
    if (this.queue.length - this.next < LEAD_ENTRIES) return undefined;
    return this.listingWait.wait();
  }

  /** Every entry was added: the archive is finished. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /**
   * Stops writing and drops what was compressed; `result()` rejects. The sink is given no
   * chunk after this, not even one of a block that was compressing: a caller may start the
   * same output over (a file written from its start again).
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.gzip.fail(new Error('bundle writing stopped'));
    this.notify();
    this.letListingOn(true);
  }

  /**
   * What the sink gave and the bundle's SHA-256 (unless made without), once `end()` was
   * called and every entry is written. Asked for once: the writer then lets go of what it
   * held and is kept as the last of its kind (see keepForNext).
   */
  async result(): Promise<{ output: T; sha256: string | undefined }> {
    const [written, collected] = await Promise.allSettled([this.written, this.collected]);
    if (collected.status === 'fulfilled') {
      if (written.status === 'rejected') throw written.reason;
      const output = this.sink.finish();
      this.keepForNext();
      return { output, sha256: collected.value };
    }
    // A sink that refused a chunk (a full disk) stops the compressor and so the writer, whose
    // error then only says the output closed: the sink's tells what happened.
    if (written.status === 'rejected' && !this.gzip.closedByReader) throw written.reason;
    throw collected.reason;
  }

  private async write(): Promise<void> {
    try {
      // The waits for entries are here, not in writeQueued's loop (see there).
      for (;;) {
        if (this.stopped) throw new Error('bundle writing stopped');
        const ended = this.ended;
        if (this.next < this.queue.length) await this.writeQueued();
        else if (ended) break;
        else await this.entryWait.wait();
      }
      this.gzip.zeros(1024); // end-of-archive marker
      this.gzip.end();
    } catch (error) {
      this.gzip.fail(error as Error);
      throw error;
    } finally {
      // A writer that failed takes no more entries: the listing goes on, to its end or its own error.
      this.letListingOn(true);
    }
  }

  /**
   * The entries queued, until none is left: only the loop, every read in it made on every
   * turn. What runs once a bundle, or only now and then, is write's: code a long bundle got
   * optimized before reaching it has no type feedback for it, and threw itself away there
   * in the next bundle, then was compiled again. So it went at the end of every bundle (the
   * end-of-archive marker), and at its start (the wait for the first entry, before V8 kept
   * feedback: a loop that waited only then had none for the wait).
   */
  private async writeQueued(): Promise<void> {
    while (this.next < this.queue.length) {
      if (this.stopped) throw new Error('bundle writing stopped');
      const item = this.queue[this.next]!;
      this.queue[this.next++] = undefined as unknown as TarItem; // written: let it go
      if (this.listingWait.waiting && (this.gzip.started || this.queue.length - this.next <= LEAD_ENTRIES / 2))
        this.letListingOn(this.gzip.started);
      await writeItem(item, this.gzip);
      if (item.open !== undefined) {
        // Opened and written: its size is known now.
        this.tarBytes += itemBound(item);
        this.unmeasured--;
      }
    }
  }

  /** The output, into the sink as it is compressed; its SHA-256 (unless made without). */
  private async collect(): Promise<string | undefined> {
    const digest = this.digest ? createHash('sha256') : undefined;
    for await (const chunk of this.gzip.output()) {
      if (this.stopped) throw new Error('bundle writing stopped');
      digest?.update(chunk);
      this.sink.write(chunk);
    }
    return digest?.digest('hex');
  }

  /**
   * The bundle went to its caller: this writer lets go of what it still holds (its sink let
   * go of the output when it gave it; the queue holds only written entries, let go one by
   * one) and is kept for the next bundle (see keepShape).
   */
  private keepForNext(): void {
    this.queue.length = 0;
    this.next = 0;
    this.folders.clear();
    keepShape(this);
  }

  private notify(): void {
    this.entryWait.wake();
  }

  /** Ends the listing's wait, if any; with `forGood`, it never waits again. */
  private letListingOn(forGood: boolean): void {
    if (forGood) this.pacesListing = false;
    this.listingWait.wake();
  }
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

/** The gzipped tar of `items`, packing from now on: its bytes come from `output()`, lent when `lends` (see ParallelGzip). */
function packTar(items: readonly TarItem[], level: number, lends: boolean): ParallelGzip {
  const gzip = new ParallelGzip(level, lends);
  writeTar(items, gzip).then(
    () => gzip.end(),
    (error: unknown) => gzip.fail(error as Error),
  );
  return gzip;
}

/**
 * Writes the tar stream of `items` into `gzip`: each header encoded in place in the block
 * being filled, each lazily read file read straight into it (see ParallelGzip.fill), one
 * entry at a time, waiting for room between entries. Measured on 10,000 files: tar-stream's
 * three chunks a file, copied into 1 MiB batches and again into the blocks, kept the main
 * thread busier than compressing did.
 */
async function writeTar(items: readonly TarItem[], gzip: ParallelGzip): Promise<void> {
  for (const item of items) await writeItem(item, gzip);
  gzip.zeros(1024); // end-of-archive marker
}

/** One entry: its header, its bytes and their padding; then waits for room. */
async function writeItem(item: TarItem, gzip: ParallelGzip): Promise<void> {
  if (item.open !== undefined) {
    // Opened now: the header says what the open descriptor says, and the bytes are read
    // through it (the reader refuses a file that grows or shrinks while it is read).
    const file = await item.open();
    try {
      item.size = file.size;
      item.mode = fileMode(file.executable);
      place(item, file.size, gzip);
      if (file.size > 0) gzip.fillFrom(file.size, file);
      gzip.zeros(padding(file.size));
    } finally {
      file.close();
    }
  } else if (item.data !== undefined || !item.read) {
    place(item, item.data?.length ?? 0, gzip);
    if (item.data !== undefined) {
      gzip.append(item.data);
      gzip.zeros(padding(item.data.length));
    }
  } else if (item.readInto && item.size > 0) {
    // Read only now, just before it is packed, into exactly the size it was laid out
    // with: the reader refuses a file whose size changed since.
    place(item, item.size, gzip);
    await gzip.fill(item.size, item.readInto);
    gzip.zeros(padding(item.size));
  } else {
    // A lazily read file must still have the size it had when the archive was laid out.
    const data = await item.read();
    if (data?.length !== item.size) {
      throw new BundleEntryError(
        'size-changed',
        item.name,
        `was ${item.size} bytes when the bundle was planned, ${data?.length} when read`,
      );
    }
    place(item, data.length, gzip);
    gzip.append(data);
    gzip.zeros(padding(data.length));
  }
  await gzip.room();
}

/** The item's header blocks, for `size` bytes of content: in the block being filled when they fit before the cut. */
function place(item: TarItem, size: number, gzip: ParallelGzip): void {
  const headerSize = headerBytes(item.name);
  const view = gzip.reserve(headerSize);
  if (view) {
    writeHeader(view, 0, item.name, item.type, item.mode, size);
    gzip.commit(headerSize);
  } else {
    const header = Buffer.allocUnsafe(headerSize);
    writeHeader(header, 0, item.name, item.type, item.mode, size);
    gzip.append(header);
  }
}

function padding(size: number): number {
  return (512 - (size % 512)) % 512;
}

/** At least the tar size of `items` (a pax header is counted for every name that might need one). */
function tarBound(items: readonly TarItem[]): number {
  let bytes = 1024; // end-of-archive marker
  for (const item of items) bytes += itemBound(item);
  return bytes;
}

/** At least the tar bytes of one item. */
function itemBound(item: TarItem): number {
  const nameBytes = Buffer.byteLength(item.name);
  const pax = nameBytes > 100 || nameBytes !== item.name.length ? 1024 + roundUp512(nameBytes + 32) : 0;
  return 512 + roundUp512(item.size) + pax;
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
 * glibc serves a request above 32 MiB (its largest mmap threshold) with fresh zero pages
 * from mmap; a smaller one may reuse heap memory, which `calloc` must clear first.
 */
const FRESH_MAPPING_BYTES = (32 << 20) + (64 << 10);

/**
 * Collects the compressed output in one buffer allocated at its bound up front, instead of
 * chunks joined at the end, which would hold the bundle twice for a moment. Only the pages
 * written become resident, as long as the allocation is fresh zero pages: a bound from 16
 * to 32 MiB is raised past 32 MiB for that. Measured for 2,000 files (a 31 MiB bound): in a
 * process that had bundled before, `Buffer.alloc` of the bound took 24-61 ms in 3 of 8 calls
 * (clearing reused heap memory: ~5,900 page faults, before the first block was compressed);
 * 33 or 40 MiB took at most 3.7 ms in 30 calls of a loop where 31 MiB took up to 75 ms.
 *
 * When output comes before the bound is known (files measured only as they are packed), the
 * first buffer is provisional: FRESH_MAPPING_BYTES, of which only the pages written become
 * resident. A bundle that ends under a quarter of it is copied into a buffer of its size, so
 * a small bundle does not hold 32 MiB of address space (and of V8's count of external
 * memory). One that outgrows it goes on in further buffers of that size, joined once at the
 * end: a copy of the bundle, and the bundle twice for a moment, only past 32 MiB compressed.
 */
class OutputBuffer {
  private buffer: Buffer;
  private length = 0;
  /** Filled buffers before `buffer`, when the bound was still unknown as each filled. */
  private readonly filled: Buffer[] = [];
  private readonly provisional: boolean;
  constructor(bound: number | undefined) {
    this.provisional = bound === undefined;
    this.buffer = freshBuffer(bound ?? FRESH_MAPPING_BYTES);
  }
  append(chunk: Buffer, bound: () => number | undefined): void {
    if (this.length + chunk.length > this.buffer.length) this.makeRoom(chunk.length, bound());
    this.length += chunk.copy(this.buffer, this.length);
  }

  /** Room for `needed` more bytes; `known` is the bound, if it is known now. */
  private makeRoom(needed: number, known: number | undefined): void {
    if (known === undefined) {
      // Still unknown: this buffer is kept as it is, and a fresh one goes on.
      this.filled.push(this.buffer.subarray(0, this.length));
      this.buffer = freshBuffer(Math.max(needed, FRESH_MAPPING_BYTES));
      this.length = 0;
      return;
    }
    // Known: the rest of the bundle in one buffer. (Past the bound, which zlib's output never
    // is, but never wrong: it doubles.)
    let before = 0;
    for (const buffer of this.filled) before += buffer.length;
    const rest = known - before >= this.length + needed ? known - before : 2 * (this.length + needed);
    const grown = freshBuffer(rest);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  bytes(): Buffer {
    const last = this.buffer.subarray(0, this.length);
    if (this.filled.length > 0) return Buffer.concat([...this.filled, last]);
    if (!this.provisional || this.length >= this.buffer.length / 4) return last;
    // Its own memory, not a slice of Node's shared pool: the host that drops it frees it.
    const own = Buffer.allocUnsafeSlow(this.length);
    last.copy(own);
    return own;
  }
}

/** A zeroed buffer of at least `bytes`: past FRESH_MAPPING_BYTES from 16 MiB on, so it is fresh zero pages. */
function freshBuffer(bytes: number): Buffer {
  return Buffer.alloc(bytes >= 16 << 20 ? Math.max(bytes, FRESH_MAPPING_BYTES) : bytes);
}
