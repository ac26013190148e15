import { Worker } from 'node:worker_threads';

/** A file's SHA-256 read back, or undefined when it could not be read or did not hold the size written. */
type HashedFile = string | undefined;

/**
 * The worker's code, plain JavaScript evaluated in the worker (so it runs the same from
 * source and from the build). It reads each file through one reused 1 MiB buffer (fresh
 * memory per file costs page faults) without following a link, and answers each batch with
 * one message. A file it cannot open or read, or that does not hold the size written, is
 * answered `null`: sealing then reads and hashes it through the store's own filesystem, with
 * every check.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { openSync, readSync, closeSync, constants } = require('node:fs');
const { createHash } = require('node:crypto');
const FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW || 0) | (constants.O_NONBLOCK || 0);
const buffer = Buffer.allocUnsafe(1024 * 1024);
parentPort.on('message', (files) => {
  const results = [];
  for (const [path, expected] of files) {
    let fd = -1;
    try {
      fd = openSync(path, FLAGS);
      const hash = createHash('sha256');
      let size = 0;
      if (expected < buffer.length) {
        // One read asks for a byte more than expected: a file of the expected size answers
        // exactly that (a read of a regular file stops short only at its end), a longer one more.
        size = readSync(fd, buffer, 0, expected + 1, 0);
        hash.update(buffer.subarray(0, size));
      } else {
        for (;;) {
          const read = readSync(fd, buffer, 0, buffer.length, null);
          if (read === 0) break;
          hash.update(buffer.subarray(0, read));
          size += read;
          if (size > expected) break; // longer than written: read no further (a device never ends)
        }
      }
      results.push(size === expected ? hash.digest('hex') : null);
    } catch {
      results.push(null);
    } finally {
      if (fd !== -1) try { closeSync(fd); } catch {}
    }
  }
  parentPort.postMessage(results);
});
`;

/** Paths waiting that are sent even while the worker is still busy with a batch. */
const BATCH = 512;

/**
 * Reads files back and hashes them on a worker thread, off the main thread (where SHA-256
 * of a 317 MiB tree costs about 300 ms of CPU that the writes are waiting on). One worker
 * per process, started on first use and not keeping the process alive while idle. Paths
 * wait while the worker hashes a batch and go as the next batch when it answers (a message
 * each way per batch, not per file: about 8 files a batch when each went at the next turn of
 * the event loop, 1,240 messages for 10,000 files). If the worker fails, every file it still
 * owed is answered `undefined`.
 */
class FileHasher {
  private worker: Worker | undefined;
  private pending: { path: string; size: number; resolve: (file: HashedFile) => void }[] = [];
  private readonly sent: ((file: HashedFile) => void)[][] = [];
  private flushScheduled = false;

  /** The SHA-256 of the file at `path` if it holds `size` bytes. */
  hash(path: string, size: number): Promise<HashedFile> {
    return new Promise((resolve) => {
      this.pending.push({ path, size, resolve });
      if (this.pending.length >= BATCH) this.flush();
      else if (this.sent.length === 0 && !this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    let worker: Worker;
    try {
      worker = this.start();
      worker.postMessage(batch.map((item) => [item.path, item.size]));
    } catch {
      for (const item of batch) item.resolve(undefined);
      return;
    }
    if (this.sent.length === 0) worker.ref();
    this.sent.push(batch.map((item) => item.resolve));
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    worker.on('message', (results: (string | null)[]) => {
      const resolves = this.sent.shift() ?? [];
      resolves.forEach((resolve, i) => {
        const result = results[i];
        resolve(result ?? undefined);
      });
      if (this.pending.length > 0) this.flush();
      else if (this.sent.length === 0) worker.unref();
    });
    const fail = () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const resolves of this.sent.splice(0)) for (const resolve of resolves) resolve(undefined);
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.worker = worker;
    return worker;
  }
}

export const fileHasher = new FileHasher();
