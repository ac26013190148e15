import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';

/**
 * Every filesystem call the store makes goes through this object, so a host can run the
 * store over another implementation and a test can make any single step fail (ENOSPC,
 * EACCES, EIO) to prove that a failure publishes nothing. The default is Node's own.
 *
 * Walking and hashing a tree uses the synchronous calls, in short slices between which
 * the event loop runs: one synchronous read costs a fraction of a round trip through
 * libuv's thread pool, which made sealing a 10,000-file tree three times slower.
 */
export type StoreFs = Pick<
  typeof fsp,
  | 'mkdir'
  | 'rename'
  | 'writeFile'
  | 'readFile'
  | 'readdir'
  | 'lstat'
  | 'chmod'
  | 'symlink'
  | 'readlink'
  | 'realpath'
  | 'rm'
  | 'open'
> &
  Pick<
    typeof fs,
    | 'lstatSync'
    | 'readdirSync'
    | 'readFileSync'
    | 'chmodSync'
    | 'readlinkSync'
    | 'openSync'
    | 'readSync'
    | 'fsyncSync'
    | 'closeSync'
  > & {
    /** Resolves every link on the way, as the kernel does (realpath(3)). */
    realpathSync(path: string): string;
    /**
     * Streams a folder's entries, so `list` and `gc` never hold a folder of a million key
     * records in memory; the store reads the `Dir` it gives with `readSync`. Optional:
     * without it the store reads each folder with `readdir`.
     */
    opendir?: typeof fsp.opendir;
  };

/** Bytes at most that `writeFile` writes synchronously; a larger file goes through the thread pool. */
const SYNC_WRITE_MAX = 256 * 1024;
/** Synchronous writing between two turns of the event loop. */
const SLICE_MS = 4;
let sliceStart = 0;

/**
 * `fs.promises.writeFile`, for a path and bytes or text (all the store writes), without a
 * FileHandle and a promise for each step. Up to 256 KiB is written synchronously (open,
 * write, close on the calling thread), in slices of 4 ms between which the event loop runs;
 * more goes through the callback API on the thread pool.
 *
 * Measured on a 10,000-file tree (1-64 KiB, 317 MiB) on tmpfs through the fill writer, with
 * a plain async write of the same files beside it: handing each of the 30,000 calls to
 * libuv's pool cost ~15 µs of the main thread apiece (the request, the wake of a pool
 * thread, the callback), ~440 ms a tree, and 1.6x the plain write's CPU; written
 * synchronously, with every file hashed on the main thread as well, 0.8x (see writer.ts for
 * where the hashing went next).
 */
const writeFile: typeof fsp.writeFile = (file, data, options) => {
  if (!isPlainWrite(file, data, options)) return fsp.writeFile(file, data, options);
  const bytes = typeof data === 'string' ? Buffer.byteLength(data) : (data as NodeJS.ArrayBufferView).byteLength;
  if (bytes <= SYNC_WRITE_MAX)
    return writeFileInSlice(file as string, data as string | NodeJS.ArrayBufferView, options);
  return writeThroughPool(file as string, data as string | NodeJS.ArrayBufferView, options);
};

/**
 * A path and bytes or text, without an AbortSignal: what the synchronous and callback calls
 * take. Anything else (a FileHandle, a stream, a signal) goes to `fs.promises.writeFile`.
 */
function isPlainWrite(...[file, data, options]: Parameters<typeof fsp.writeFile>): boolean {
  const plainData = typeof data === 'string' || ArrayBuffer.isView(data);
  const plainOptions = options === undefined || options === null || typeof options === 'string' || !options.signal;
  return typeof file === 'string' && plainData && plainOptions;
}

function writeThroughPool(
  file: string,
  data: string | NodeJS.ArrayBufferView,
  options: Parameters<typeof fsp.writeFile>[2],
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (error: NodeJS.ErrnoException | null) => (error ? reject(error) : resolve());
    fs.writeFile(file, data, (options ?? {}) as fs.WriteFileOptions, done);
  });
}

async function writeFileInSlice(
  file: string,
  data: string | NodeJS.ArrayBufferView,
  options: Parameters<typeof fsp.writeFile>[2],
): Promise<void> {
  if (performance.now() - sliceStart >= SLICE_MS) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  }
  fs.writeFileSync(file, data, (options ?? {}) as fs.WriteFileOptions);
}

/**
 * `writeFile` through libuv's thread pool only, whatever the size: for a folder on a disk,
 * where the kernel's part of a write (page cache, block allocation, journal) is most of its
 * cost and runs on the calling thread. Measured on 10,000 files (1-64 KiB, 317 MiB) on this
 * project's VM disk, the fill writer against a plain write of 32 files at a time: written
 * synchronously, the main thread spent 3.7 s of CPU in the kernel while the other core idled
 * (`pnpm bench content-cache`: 1.72x the plain write); three side-by-side runs gave 1.65x,
 * 1.24x and 1.19x written synchronously, 1.35x, 1.08x and 0.98x through the pool. On tmpfs
 * the pool measured 2.00x where synchronous writes measured 1.51x in the same run, so
 * TreeWriter takes this one only where the folder is not in memory (see fillWriteFile).
 */
export const pooledWriteFile: typeof fsp.writeFile = (file, data, options) =>
  isPlainWrite(file, data, options)
    ? writeThroughPool(file as string, data as string | NodeJS.ArrayBufferView, options)
    : fsp.writeFile(file, data, options);

/** Linux's magic numbers (statfs f_type) of the filesystems whose files live in memory. */
const MEMORY_FILESYSTEMS = new Set([0x01021994 /* tmpfs */, 0x858458f6 /* ramfs */]);

/** Whether `folder` is on a filesystem held in memory (tmpfs, ramfs); false when that cannot be told. */
export function inMemoryFilesystem(folder: string): boolean {
  if (process.platform !== 'linux') return false;
  try {
    return MEMORY_FILESYSTEMS.has(fs.statfsSync(folder).type);
  } catch {
    return false;
  }
}

export const nodeStoreFs: StoreFs = {
  mkdir: fsp.mkdir,
  rename: fsp.rename,
  writeFile,
  readFile: fsp.readFile,
  readdir: fsp.readdir,
  lstat: fsp.lstat,
  chmod: fsp.chmod,
  symlink: fsp.symlink,
  readlink: fsp.readlink,
  realpath: fsp.realpath,
  rm: fsp.rm,
  open: fsp.open,
  lstatSync: fs.lstatSync,
  readdirSync: fs.readdirSync,
  readFileSync: fs.readFileSync,
  chmodSync: fs.chmodSync,
  readlinkSync: fs.readlinkSync,
  // The native call: Node's JavaScript realpathSync folds `..` before following the link
  // in front of it, so `x -> up/..` with `up -> ..` would seem to stay inside a tree it leaves.
  realpathSync: fs.realpathSync.native,
  openSync: fs.openSync,
  readSync: fs.readSync,
  fsyncSync: fs.fsyncSync,
  closeSync: fs.closeSync,
  opendir: fsp.opendir,
};
