import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { FillOutsideDestinationError } from './errors.js';
import { fileHasher } from './file-hasher.js';
import { fileWriter } from './file-writer.js';
import { type StoreFs, inMemoryFilesystem, nodeStoreFs, pooledWriteFile } from './store-fs.js';
import type { KnownFile } from './tree.js';

export interface WriteFileOptions {
  /** Any execute bit makes the stored file 0755; otherwise it is 0644. */
  mode?: number;
}

/**
 * The first bytes of a fill are written as fillWriteFile says and hashed on the main thread:
 * a small tree would not repay the threads. Past them, on a disk, a file of up to 1 MiB is
 * written and hashed on a writer thread (see file-writer.ts); any other file (larger, or in
 * a folder in memory, where the main thread writes synchronously) is written as the first
 * ones, then read back and hashed on a worker thread (see file-hasher.ts), so the bytes of a
 * large file are never copied whole.
 */
const INLINE_HASH_BYTES = 4 * 1024 * 1024;
const THREAD_WRITE_MAX = 1024 * 1024;

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
  private readonly written = new Map<string, KnownFile>();
  private readonly folders = new Map<string, Promise<unknown>>();
  /** Per normalised mode: whether a file created with it was seen to keep it (the umask may strip bits). */
  private readonly modeHolds = new Map<number, Promise<boolean>>();
  /** Only Node's own filesystem writes where the worker reads; another StoreFs is hashed inline. */
  private readonly readsBack: boolean;
  /** How files are written (see fillWriteFile). */
  private readonly write: StoreFs['writeFile'];
  /** Whether files past the first 4 MiB go to the writer threads: Node's filesystem, a folder not in memory. */
  private readonly onThreads: boolean;
  private inlineBytes = 0;

  constructor(
    private readonly fs: StoreFs,
    readonly destination: string,
  ) {
    this.readsBack = fs.writeFile === nodeStoreFs.writeFile;
    // The destination's folder: the destination itself may not be made yet.
    this.write = fillWriteFile(fs, dirname(destination));
    this.onThreads = this.write === pooledWriteFile;
  }

  async writeFile(path: string, data: Uint8Array | string, options: WriteFileOptions = {}): Promise<void> {
    const rel = checkRelative(path);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const abs = join(this.destination, rel);
    const mode = (options.mode ?? 0o644) & 0o111 ? 0o755 : 0o644;
    const size = bytes.byteLength;
    await this.folder(dirname(abs));
    const inline = !this.readsBack || this.inlineBytes < INLINE_HASH_BYTES;
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
      if (inline) sha256 = createHash('sha256').update(bytes).digest('hex');
      created = await creating;
    }
    let trustMode = created;
    if (!created)
      await this.write(abs, bytes); // An overwrite keeps the old mode: seal reads it.
    else trustMode = await this.modeHoldsFor(mode, abs);
    // Read back only once the write is complete, so the hash is of what the file holds.
    sha256 ??= fileHasher.hash(abs, size);
    this.written.set(rel, trustMode && !this.written.has(rel) ? { size, sha256, mode } : { size, sha256 });
  }

  /**
   * Every file written through this writer, with its hash or the promise of a thread still
   * reading it back (sealing walks the tree meanwhile).
   */
  known(): ReadonlyMap<string, KnownFile> {
    return this.written;
  }

  private modeHoldsFor(mode: number, abs: string): Promise<boolean> {
    let holds = this.modeHolds.get(mode);
    if (!holds) {
      holds = this.fs.lstat(abs).then((stat) => (stat.mode & 0o7777) === mode);
      this.modeHolds.set(mode, holds);
    }
    return holds;
  }

  /** Creates a folder (and its parents) once, however many files go into it. */
  private folder(abs: string): Promise<unknown> {
    let made = this.folders.get(abs);
    if (!made) {
      made = this.fs.mkdir(abs, { recursive: true });
      this.folders.set(abs, made);
    }
    return made;
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

/** A path relative to the destination, with `/` separators, that cannot leave it. */
function checkRelative(path: string): string {
  const segments = path.split('/');
  const bad =
    path.length === 0 ||
    path.includes('\0') ||
    path.includes('\\') ||
    path.startsWith('/') ||
    segments.some((s) => s === '' || s === '.' || s === '..');
  if (bad) throw new FillOutsideDestinationError(path);
  return path;
}
