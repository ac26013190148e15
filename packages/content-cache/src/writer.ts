import * as crypto from 'node:crypto';
import { dirname, join, sep } from 'node:path';
import { FillOutsideDestinationError } from './errors.js';
import { fileHasher } from './file-hasher.js';
import { fileWriter } from './file-writer.js';
import { type StoreFs, inMemoryFilesystem, nodeStoreFs, pooledWriteFile } from './store-fs.js';
import type { KnownFile, KnownFiles } from './tree.js';

export interface WriteFileOptions {
  /** Any execute bit makes the stored file 0755; otherwise it is 0644. */
  mode?: number;
}

/**
 * The first bytes of a fill are written as fillWriteFile says and hashed on the main thread:
 * a small tree would not repay the threads. Past them, a file of up to 1 MiB is written and
 * hashed on a writer thread (see file-writer.ts), on a disk and in memory alike; a larger
 * one is written as the first ones, then read back and hashed on a worker thread (see
 * file-hasher.ts), so the bytes of a large file are never copied whole.
 *
 * In memory (tmpfs) the main thread used to write every file itself, synchronously, while
 * the worker threads read them back to hash them. Once the threads ran below the main
 * thread's priority (see thread-batches.ts) and took smaller batches (see file-writer.ts),
 * the writer threads did better there too: publishing 10,000 files (317 MiB) on tmpfs took
 * 441 ms written on the main thread and read back, 378 ms on the writer threads (medians of
 * twelve rounds, side by side in one process, against 354 ms for the plain write).
 */
const INLINE_HASH_BYTES = 4 * 1024 * 1024;
const THREAD_WRITE_MAX = 1024 * 1024;

/** A folder the writer wrote into: its creation (with its parents), and the files written there by name. */
interface WrittenFolder {
  made: Promise<unknown>;
  files: Map<string, KnownFile>;
}

/**
 * Writes files into a fill's destination and remembers what it wrote, so publication need
 * not read the tree back on the main thread: each file is hashed as it is written, from the
 * bytes written, or read back once written (see INLINE_HASH_BYTES), and a file this writer created
 * keeps the mode it was created with, so sealing needs no `lstat` for it. A file written any
 * other way, or one the worker could not read back, is read, hashed and checked at
 * publication as usual. A file written here and later changed by other means would keep
 * what was recorded: the fill is the host's own code, and `verify()` re-hashes every file
 * from disk.
 */
export class TreeWriter {
  /**
   * Each folder written into, by its path relative to the destination ('' for itself): its
   * creation (once), and the files written there by name. Sealing looks each folder up once
   * and then its entries by the names it lists: with one map of every path, that lookup
   * was the largest part of sealing a written file (sealing 10,000 files took 31 ms this
   * way, 34 ms with one map; medians of 30 rounds, side by side).
   */
  private readonly folders = new Map<string, WrittenFolder>();
  /** The destination and a `/`: a checked relative path appended to it is the file's path. */
  private readonly prefix: string;
  /** Per normalised mode: whether a file created with it was seen to keep it (the umask may strip bits). */
  private readonly modeHolds = new Map<number, Promise<boolean>>();
  /**
   * Only Node's own filesystem writes where the threads write and read; another StoreFs is
   * written through itself and hashed inline.
   */
  private readonly onThreads: boolean;
  /** How files are written (see fillWriteFile). */
  private readonly write: StoreFs['writeFile'];
  private inlineBytes = 0;

  constructor(
    private readonly fs: StoreFs,
    readonly destination: string,
  ) {
    this.onThreads = fs.writeFile === nodeStoreFs.writeFile;
    this.prefix = join(destination, sep);
    // The destination's folder: the destination itself may not be made yet.
    this.write = fillWriteFile(fs, dirname(destination));
  }

  async writeFile(path: string, data: Uint8Array | string, options: WriteFileOptions = {}): Promise<void> {
    const rel = checkRelative(path);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    // No empty, `.` or `..` segment: appended, it is what `join` would make of it.
    const abs = this.prefix + rel;
    const mode = (options.mode ?? 0o644) & 0o111 ? 0o755 : 0o644;
    const size = bytes.byteLength;
    const slash = rel.lastIndexOf('/');
    const name = rel.slice(slash + 1);
    const folder = this.folder(slash === -1 ? '' : rel.slice(0, slash));
    await folder.made;
    const inline = !this.onThreads || this.inlineBytes < INLINE_HASH_BYTES;
    if (inline) this.inlineBytes += size;
    let sha256: string | Promise<string | undefined> | undefined;
    let created: boolean;
    if (this.onThreads && !inline && size <= THREAD_WRITE_MAX) {
      // `wx` on a writer thread as well: created with the mode asked for, hashed there.
      sha256 = await fileWriter.write(abs, bytes, mode).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
        return undefined;
      });
      created = sha256 !== undefined;
    } else {
      // `wx` creates the file, so its mode is the one asked for (less the umask, checked once per mode).
      const creating = this.write(abs, bytes, { mode, flag: 'wx' }).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
          return false;
        },
      );
      if (inline) sha256 = sha256Hex(bytes);
      created = await creating;
    }
    let trustMode = created;
    if (!created)
      await this.write(abs, bytes); // An overwrite keeps the old mode: seal reads it.
    else trustMode = await this.modeHoldsFor(mode, abs);
    // Read back only once the write is complete, so the hash is of what the file holds.
    sha256 ??= fileHasher.hash(abs, size);
    const { files } = folder;
    files.set(name, trustMode && !files.has(name) ? { path: rel, size, sha256, mode } : { path: rel, size, sha256 });
  }

  /**
   * Every file written through this writer, by folder and name, with its hash or the
   * promise of a thread still reading it back (sealing walks the tree meanwhile).
   */
  known(): KnownFiles {
    return new Map([...this.folders].map(([rel, { files }]) => [rel, files]));
  }

  private modeHoldsFor(mode: number, abs: string): Promise<boolean> {
    let holds = this.modeHolds.get(mode);
    if (!holds) {
      holds = this.fs.lstat(abs).then((stat) => (stat.mode & 0o7777) === mode);
      this.modeHolds.set(mode, holds);
    }
    return holds;
  }

  /** A folder by its relative path ('' for the destination), created (with its parents) once, however many files go into it. */
  private folder(rel: string): WrittenFolder {
    let folder = this.folders.get(rel);
    if (!folder) {
      folder = {
        files: new Map(),
        made: this.fs.mkdir(rel === '' ? this.destination : this.prefix + rel, { recursive: true }),
      };
      this.folders.set(rel, folder);
    }
    return folder;
  }
}

/**
 * How a fill writes into `folder`: with Node's own filesystem, small files synchronously
 * where the folder is in memory (tmpfs) and every file through the thread pool elsewhere
 * (see pooledWriteFile); with another StoreFs, its own `writeFile`.
 */
export function fillWriteFile(fs: StoreFs, folder: string): StoreFs['writeFile'] {
  if (fs.writeFile !== nodeStoreFs.writeFile) return fs.writeFile;
  return inMemoryFilesystem(folder) ? fs.writeFile : pooledWriteFile;
}

/**
 * SHA-256 in hex, in one call where Node has `crypto.hash` (20.12 and later): a Hash object
 * per file costs more than its bytes at these sizes (see file-writer.ts).
 */
const sha256Hex: (bytes: Uint8Array) => string =
  typeof crypto.hash === 'function'
    ? (bytes) => crypto.hash('sha256', bytes, 'hex')
    : (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

/** A path relative to the destination, with `/` separators, that cannot leave it. */
function checkRelative(path: string): string {
  if (NOT_RELATIVE.test(path)) throw new FillOutsideDestinationError(path);
  return path;
}

/**
 * An empty, `.` or `..` segment anywhere (so also an empty path, a leading `/`, a trailing
 * `/` and `//`), a NUL or a backslash.
 */
const NOT_RELATIVE = /(?:^|\/)\.{0,2}(?:\/|$)|[\0\\]/;
