import { chmod, lstat, mkdtemp, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import {
  ArchiveError,
  checkReadOptions,
  readArchive,
  sortInArchiveOrder,
  type ArchiveFile,
  type ArchiveSource,
  type ArchiveVisitor,
  type ReadArchiveOptions,
} from '@agentproto/archive';
import type { Worker } from 'node:worker_threads';
import { ExtractIOError } from './errors.js';
import {
  acquireTreeWriterThread,
  releaseTreeWriterThread,
  type TreeOp,
  TreeSteps,
  type TreeProblem,
  type TreeReply,
} from './tree-writer-thread.js';

export type ExtractOptions = ReadArchiveOptions;

export interface ExtractResult {
  /** The files written, relative to `dest`, in the order `writeBundle` writes them (GNU tar `--sort=name`). */
  files: string[];
  /** Their total size. */
  bytes: number;
}

const DIRECTORY_MODE = 0o755;
const FILE_MODE = 0o644;
const EXECUTABLE_MODE = 0o755;

/**
 * Files up to this size are read whole and written as one open + write + fchmod + close;
 * larger ones go to disk one chunk at a time. Either way their bytes travel to the writing
 * thread in batches of about BATCH_BYTES (one message, one transferred buffer), at most
 * BYTES_IN_FLIGHT of them queued: memory stays bounded whatever the archive.
 */
const SMALL_FILE_BYTES = 1 << 20;
const BATCH_BYTES = 256 << 10;
const BATCH_OPS = 512;
const BYTES_IN_FLIGHT = 16 << 20;
/** Batch buffers the thread handed back, kept for the next batches (fresh memory costs page faults). */
const SPARE_BUFFERS = 8;

/**
 * Extracts a gzipped tar from outside (a GitHub tarball, a bundle handed to a runner) into
 * `dest`, which must not exist yet; its parent must. Only regular files and directories are
 * written: every rule of `readArchive` applies, and a refused archive throws ArchiveError.
 *
 * Nothing half-written is ever visible at `dest`: the tree is built in a sibling folder
 * (".<name>.partial-XXXXXX", same filesystem) that one rename publishes at the end, and is
 * removed on any failure. Modes are exact whatever the umask: files 0644, or 0755 when the
 * entry had any execute bit; directories, and `dest` itself, 0755. Files are created with
 * O_EXCL, so two names one filesystem folds together (case, Unicode form) are refused as
 * duplicates instead of one overwriting the other.
 */
export async function extractTarGz(
  source: ArchiveSource,
  dest: string,
  options: ExtractOptions,
): Promise<ExtractResult> {
  checkReadOptions(options); // before anything touches the disk
  const target = resolve(dest);
  await assertAbsent(target);
  let staging: string;
  try {
    staging = await mkdtemp(join(dirname(target), `.${basename(target)}.partial-`));
  } catch (error) {
    throw new ExtractIOError('create staging folder beside the destination', target, error);
  }

  let writer: TreeWriter;
  try {
    writer = new TreeWriter(staging);
  } catch (error) {
    // A host that allows no worker threads (the permission model without --allow-worker).
    await rm(staging, { recursive: true, force: true });
    throw new ExtractIOError('start the writing thread for', target, error);
  }
  try {
    await readArchive(source, options, writer);
    await writer.finish();
    await step('set mode of', target, () => chmod(staging, DIRECTORY_MODE));
    // Rename is the commit point: before it nothing is at `dest`, after it everything is.
    await step('rename staging folder to', target, () => rename(staging, target));
  } catch (error) {
    // Never remove the folder under a write still in flight: it could recreate a path in it.
    await writer.close();
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return { files: sortInArchiveOrder(writer.files, (path) => path), bytes: writer.bytes };
}

async function assertAbsent(target: string): Promise<void> {
  try {
    await lstat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new ExtractIOError('check destination', target, error);
  }
  const exists = Object.assign(new Error('destination already exists'), { code: 'EEXIST' });
  throw new ExtractIOError('check destination', target, exists);
}

async function step<T>(what: string, path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new ExtractIOError(what, path, error);
  }
}

/**
 * Writes what readArchive accepts into the staging folder. Decides here, in archive order,
 * which folders to make and what each file holds; a thread of its own performs the steps
 * (tree-writer-thread.ts) while this one inflates and checks the next entries. A failed
 * step surfaces at the next entry or at `finish`, the first one only.
 */
class TreeWriter implements ArchiveVisitor {
  readonly files: string[] = [];
  bytes = 0;
  /** Folders (relative) already asked for, and the root. */
  private readonly folders = new Set<string>(['']);
  private readonly stop = new SharedArrayBuffer(4);
  private readonly thread: Worker;
  private readonly steps = new TreeSteps();
  private data: Buffer | undefined;
  private used = 0;
  private nextId = 0;
  /** Batch id → its bytes, until the thread is done with it. */
  private readonly pending = new Map<number, number>();
  private bytesInFlight = 0;
  private readonly spare: ArrayBuffer[] = [];
  private wake: (() => void) | undefined;
  private wakeEnded: (() => void) | undefined;
  private failure: unknown;
  private ended: Promise<void> | undefined;
  private exited = false;

  constructor(private readonly root: string) {
    this.thread = acquireTreeWriterThread(root, this.stop);
    this.thread.on('message', this.onMessage);
    this.thread.on('error', this.onError);
    this.thread.on('exit', this.onExit);
  }

  private readonly onMessage = (reply: TreeReply): void => {
    if (reply.kind === 'ended') {
      this.wakeEnded?.();
      return;
    }
    if (reply.problem) this.failure ??= this.problemError(reply.problem);
    this.bytesInFlight -= this.pending.get(reply.id) ?? 0;
    this.pending.delete(reply.id);
    if (reply.data !== undefined && this.spare.length < SPARE_BUFFERS) this.spare.push(reply.data);
    this.wakeUp();
  };

  private readonly onError = (error: unknown): void => {
    this.failure ??= new ExtractIOError('write files in', this.root, error);
  };

  private readonly onExit = (): void => {
    this.exited = true;
    if (this.ended === undefined) {
      this.failure ??= new ExtractIOError('write files in', this.root, new Error('the writing thread exited'));
    }
    this.pending.clear();
    this.wakeUp();
    this.wakeEnded?.();
  };

  async directory(path: string, entry: string): Promise<void> {
    this.throwIfFailed();
    this.makeFolder(path, entry);
  }

  async file(file: ArchiveFile, body: AsyncIterable<Buffer>): Promise<void> {
    this.throwIfFailed();
    const slash = file.path.lastIndexOf('/');
    this.makeFolder(slash < 0 ? '' : file.path.slice(0, slash), file.entry);
    const mode = file.executable ? EXECUTABLE_MODE : FILE_MODE;
    if (file.size <= SMALL_FILE_BYTES) {
      const data = await this.room(file.size);
      const at = this.used;
      let length = 0;
      for await (const chunk of body) {
        // readArchive hands exactly `file.size` bytes: anything more is never copied past the batch.
        if (length + chunk.length > file.size) throw new RangeError(`${JSON.stringify(file.path)}: body past its size`);
        chunk.copy(data, at + length);
        length += chunk.length;
      }
      this.used += length;
      this.push({ kind: 'file', path: file.path, entry: file.entry, mode, at, length });
    } else {
      this.push({ kind: 'open', path: file.path, entry: file.entry, mode });
      for await (const chunk of body) {
        for (let offset = 0; offset < chunk.length; ) {
          const length = Math.min(chunk.length - offset, BATCH_BYTES);
          const data = await this.room(length);
          const at = this.used;
          chunk.copy(data, at, offset, offset + length);
          this.used += length;
          offset += length;
          this.push({ kind: 'chunk', at, length });
        }
      }
      this.push({ kind: 'close' });
    }
    this.files.push(file.path);
    this.bytes += file.size;
  }

  /** Sends what is left, waits until every step is done, and stops the thread; throws the first failure. */
  async finish(): Promise<void> {
    this.send();
    while (this.pending.size > 0 && this.failure === undefined) await this.next();
    await this.close();
    this.throwIfFailed();
  }

  /**
   * Stops the thread between two steps and waits until it is idle (no file open, no step
   * left) or has exited: after this no write is in flight, so the staging folder can be
   * removed. A thread whose every step succeeded is kept for the next extraction; any other
   * is terminated. Never throws.
   */
  close(): Promise<void> {
    this.ended ??= (async () => {
      Atomics.store(new Int32Array(this.stop), 0, 1);
      if (!this.exited) {
        const ended = new Promise<void>((done) => {
          this.wakeEnded = done;
        });
        this.thread.postMessage({ kind: 'end' });
        await ended;
      }
      this.thread.off('message', this.onMessage);
      this.thread.off('error', this.onError);
      this.thread.off('exit', this.onExit);
      if (!this.exited && this.failure === undefined && this.pending.size === 0) releaseTreeWriterThread(this.thread);
      else await this.thread.terminate();
    })();
    return this.ended;
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private push(op: TreeOp): void {
    this.steps.add(op);
    if (this.steps.count >= BATCH_OPS) this.send();
  }

  /**
   * The batch buffer, with room for `size` more bytes at `this.used`: the current one, or a
   * new one once the current batch is sent (waiting while too many bytes are in flight).
   */
  private async room(size: number): Promise<Buffer> {
    if (this.data !== undefined && this.used + size <= this.data.length) return this.data;
    this.send();
    while (this.bytesInFlight > 0 && this.bytesInFlight + size > BYTES_IN_FLIGHT) {
      await this.next();
      this.throwIfFailed();
    }
    // Its own ArrayBuffer (never the shared pool), so it can be handed to the thread whole: one
    // the thread handed back when it is large enough, else a new one.
    const length = Math.max(size, BATCH_BYTES);
    const reused = this.spare.findIndex((buffer) => buffer.byteLength >= length);
    this.data = reused < 0 ? Buffer.allocUnsafeSlow(length) : Buffer.from(this.spare.splice(reused, 1)[0]!);
    this.used = 0;
    return this.data;
  }

  /** Hands the steps asked for so far, and the buffer holding their bytes, to the thread. */
  private send(): void {
    if (this.steps.count === 0) return;
    const id = this.nextId++;
    const { fields, names } = this.steps.take();
    const data = this.data;
    if (data !== undefined && this.used > 0) {
      const buffer = data.buffer as ArrayBuffer;
      this.pending.set(id, buffer.byteLength);
      this.bytesInFlight += buffer.byteLength;
      this.thread.postMessage({ kind: 'batch', id, fields, names, data: buffer }, [
        fields.buffer as ArrayBuffer,
        buffer,
      ]);
      this.data = undefined;
      this.used = 0;
    } else {
      this.pending.set(id, 0);
      this.thread.postMessage({ kind: 'batch', id, fields, names }, [fields.buffer as ArrayBuffer]);
    }
  }

  private next(): Promise<void> {
    return new Promise((done) => {
      this.wake = done;
    });
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Asks for `path` and any folder above it not asked for yet, parents first. */
  private makeFolder(path: string, entry: string): void {
    if (this.folders.has(path)) return;
    const slash = path.lastIndexOf('/');
    this.makeFolder(slash < 0 ? '' : path.slice(0, slash), entry);
    this.push({ kind: 'folder', path, entry });
    this.folders.add(path);
  }

  /** What a failed step means: the archive's names colliding on this filesystem, or I/O. */
  private problemError(problem: TreeProblem): Error {
    const cause = Object.assign(new Error(problem.message), {
      code: problem.code,
      errno: problem.errno,
      syscall: problem.syscall,
    });
    if (problem.what === 'create folder' || problem.what === 'create file') {
      // EEXIST/ENOTDIR/EISDIR: two names this filesystem folds together (case, Unicode form).
      if (problem.code === 'EEXIST') {
        return new ArchiveError(
          'duplicate',
          problem.entry,
          `${JSON.stringify(problem.path)} collides with an earlier entry on this filesystem`,
        );
      }
      if (problem.code === 'ENOTDIR' || problem.code === 'EISDIR') {
        return new ArchiveError(
          'file-dir-conflict',
          problem.entry,
          `${JSON.stringify(problem.path)} collides with an earlier entry on this filesystem`,
        );
      }
    }
    return new ExtractIOError(problem.what, join(this.root, problem.path), cause);
  }
}
