import { availableParallelism } from 'node:os';
import { ThreadBatches } from './thread-batches.js';

/**
 * The writer threads' code, plain JavaScript evaluated in each thread (so it runs the same
 * from source and from the build). A message holds one buffer with the bytes of a batch of
 * files, each at its offset; each file is created as `fs.writeFile` with `wx` would (it must
 * not exist, so a link in its place is never followed), written whole, closed, and hashed
 * from the same bytes. Each file is answered with its SHA-256, or with the error as Node
 * reported it, and the buffer goes back with the answer, to carry another batch. A
 * descriptor is closed once, whatever `close` reports: Linux releases it either way, and a
 * second close could close another thread's file.
 *
 * Each file is hashed with one call, `crypto.hash`, where Node has it: a Hash object per
 * file is a native object the collector finalises. Writing 10,000 files (317 MiB) on tmpfs
 * through these threads took 728 and 759 ms of CPU that way, 772 and 826 ms with a Hash
 * object per file (medians of eight rounds; two runs each way).
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { openSync, writeSync, closeSync } = require('node:fs');
const crypto = require('node:crypto');
// One call per file where Node has crypto.hash (20.12 and later), see above.
const sha256 = typeof crypto.hash === 'function'
  ? (bytes) => crypto.hash('sha256', bytes, 'hex')
  : (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
parentPort.on('message', ({ buffer, files }) => {
  const bytes = new Uint8Array(buffer);
  const results = [];
  for (const [path, offset, length, mode] of files) {
    let fd = -1;
    try {
      fd = openSync(path, 'wx', mode);
      let written = 0;
      while (written < length) written += writeSync(fd, bytes, offset + written, length - written);
      const open = fd;
      fd = -1;
      closeSync(open);
      results.push(sha256(bytes.subarray(offset, offset + length)));
    } catch (error) {
      results.push({ error: { message: String(error && error.message), code: error && error.code, errno: error && error.errno, syscall: error && error.syscall } });
    } finally {
      if (fd !== -1) try { closeSync(fd); } catch {}
    }
  }
  parentPort.postMessage({ results, buffer }, [buffer]);
});
`;

/** A file's SHA-256 (hex: a string is cheaper to pass back than an object holding it), or its error. */
type Written = string | { error: { message: string; code?: string; errno?: number; syscall?: string } };

type Job = readonly [path: string, bytes: Uint8Array, mode: number];

/**
 * Bytes of a batch buffer that is used again. A batch closes once it holds 1 MiB or more,
 * and its last file holds at most 1 MiB (writer.ts), so nearly every batch fits; a larger
 * one gets a buffer of its own, not kept.
 */
const BATCH_BUFFER = 2 * 1024 * 1024;

/**
 * Writes files on worker threads and hashes them there, from a copy of the bytes: the main
 * thread copies each batch's files into one buffer and hands it over (a transfer, not a
 * second copy), so it makes no system call for them and nothing is read back. Up to four
 * threads (fewer on fewer cores), each started on first need; a batch is at most 8 files
 * or 1 MiB, so every thread is fed while a fill keeps writes in flight.
 *
 * Why 8: a fill keeps only so many writes in flight (the bench, 32), and a file counts
 * against them from the call until the main thread has had its batch's answer. With 16 a
 * batch, a thread's answer came late for the first files of its batch and the threads ran
 * dry waiting for the next ones; more, smaller messages cost less than that idle time.
 * Publishing 10,000 files (317 MiB), medians side by side in one process: on tmpfs 426 ms
 * with 8, 455 ms with 16 (12 rounds); on a disk 583 ms and 603 ms (8 rounds). 6 and 12
 * measured slower than 8 in both.
 */
class FileWriter {
  /**
   * Batch buffers the threads handed back, for the next batches: a fresh buffer is fresh
   * memory (page faults where it is filled, and unmapping where the thread drops it).
   * Copying 317 MiB into fresh 1 MiB buffers cost the main thread 85-130 ms where copying
   * it into reused ones cost 25 ms; publishing 10,000 files (317 MiB) on this project's VM
   * disk took 1,340-1,610 ms of CPU (350-400 ms on the main thread) with buffers used
   * again, 1,720-2,010 ms (500-610 ms) with a fresh one per batch (three runs of five
   * rounds, side by side). Never more than the batches that can be outstanding at once
   * (two a thread: 8 MiB on two cores), and let go a second after the threads first fall
   * idle (a fill still going then takes fresh ones again).
   */
  private spare: ArrayBuffer[] = [];
  private dropping: NodeJS.Timeout | undefined;
  private readonly threads = new ThreadBatches<Job, Written>({
    source: WORKER_SOURCE,
    threads: Math.min(4, availableParallelism()),
    maxItems: 8,
    weigh: ([, bytes]) => bytes.byteLength,
    maxWeight: 1024 * 1024,
    message: (jobs) => {
      let total = 0;
      for (const [, bytes] of jobs) total += bytes.byteLength;
      // A fresh one not zero-filled: every byte the thread reads is copied over below.
      const buffer = new Uint8Array(
        (total <= BATCH_BUFFER && this.spare.pop()) || Buffer.allocUnsafeSlow(Math.max(total, BATCH_BUFFER)).buffer,
      );
      let offset = 0;
      const files = jobs.map(([path, bytes, mode]) => {
        buffer.set(bytes, offset);
        offset += bytes.byteLength;
        return [path, offset - bytes.byteLength, bytes.byteLength, mode] as const;
      });
      return { value: { buffer: buffer.buffer, files }, transfer: [buffer.buffer] };
    },
    results: (answer) => {
      const { results, buffer } = answer as { results: Written[]; buffer: ArrayBuffer };
      if (buffer.byteLength === BATCH_BUFFER) this.spare.push(buffer);
      return results;
    },
    idle: () => {
      this.dropping ??= setTimeout(() => {
        this.spare = [];
        this.dropping = undefined;
      }, 1000).unref();
    },
  });

  /**
   * Creates `path` (it must not exist) with `mode` (less the umask) holding `bytes`, and
   * answers their SHA-256. Rejects with the error Node reported (`EEXIST`, `ENOSPC`, ...),
   * or with one saying the thread stopped before answering.
   */
  async write(path: string, bytes: Uint8Array, mode: number): Promise<string> {
    const written = await this.threads.run([path, bytes, mode]);
    if (written === undefined) throw new Error(`the writer thread stopped before writing ${path}`);
    if (typeof written === 'string') return written;
    const { message, ...fields } = written.error;
    throw Object.assign(new Error(message), fields, { path });
  }
}

export const fileWriter = new FileWriter();
