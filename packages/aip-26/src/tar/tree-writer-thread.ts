import type { Worker } from 'node:worker_threads';
import { workerThreads } from '../node-builtin.js';

/** One filesystem step, in archive order. Paths are relative to the staging folder. */
export type TreeOp =
  | { kind: 'folder'; path: string; entry: string }
  | { kind: 'file'; path: string; entry: string; mode: number; at: number; length: number }
  | { kind: 'open'; path: string; entry: string; mode: number }
  | { kind: 'chunk'; at: number; length: number }
  | { kind: 'close' };

/** Each step's numbers in TreeSteps: kind, mode, at, length, and the lengths of its path and entry. */
const FIELDS = 6;
const KINDS = ['folder', 'file', 'open', 'chunk', 'close'] as const;

/**
 * The steps of one batch, encoded for one message: six numbers each in one Int32Array
 * (transferred) and every path and entry name in one string, sliced by their lengths (so
 * any character in a name is fine). A structured clone of one typed array and one string
 * costs a fraction of cloning an object per step on both threads (10,000 files: about
 * 35 ms less).
 */
export class TreeSteps {
  private fields: number[] = [];
  private names = '';

  get count(): number {
    return this.fields.length / FIELDS;
  }

  add(op: TreeOp): void {
    const path = 'path' in op ? op.path : '';
    const entry = 'entry' in op ? op.entry : '';
    this.fields.push(
      KINDS.indexOf(op.kind),
      'mode' in op ? op.mode : 0,
      'at' in op ? op.at : 0,
      'length' in op ? op.length : 0,
      path.length,
      entry.length,
    );
    this.names += path + entry;
  }

  /** The encoded steps; the list is empty again after. */
  take(): { fields: Int32Array; names: string } {
    const taken = { fields: Int32Array.from(this.fields), names: this.names };
    this.fields = [];
    this.names = '';
    return taken;
  }
}

/** A step that failed: which, where, and the system error's own fields (an Error loses them between threads). */
export interface TreeProblem {
  what: 'create folder' | 'inspect' | 'set mode of' | 'create file' | 'write file';
  path: string;
  entry: string;
  code: string | undefined;
  errno: number | undefined;
  syscall: string | undefined;
  message: string;
}

/** `data`: the batch's buffer, handed back (transferred) for the next batch to reuse. */
export type TreeReply = { kind: 'done'; id: number; problem?: TreeProblem; data?: ArrayBuffer } | { kind: 'ended' };

/**
 * A thread that performs the steps: each batch arrives as one message (ops and one
 * transferred buffer holding their data, transferred back once done) and is done with plain
 * synchronous calls, so a file costs open + write + fchmod + close and no hop through the
 * event loop or the thread pool. After the first failure it does nothing more; a non-zero
 * `stop[0]` stops it between steps. Plain JavaScript, evaluated as such: it runs the same
 * from sources and from a build.
 *
 * Starting a thread costs a new V8 heap (about 90 ms of CPU and 7 MiB of fresh memory here),
 * so one that finished an extraction cleanly is kept, unreferenced (it never keeps the
 * process alive), for the next one, and stopped after IDLE_MS without work. One extraction
 * uses a thread at a time; extractions at the same time each start their own.
 */
export function acquireTreeWriterThread(root: string, stop: SharedArrayBuffer): Worker {
  let thread: Worker;
  if (idle !== undefined) {
    thread = idle.thread;
    clearTimeout(idle.timer);
    idle = undefined;
    thread.ref();
  } else {
    thread = new (workerThreads().Worker)(TREE_WRITER_SOURCE, {
      eval: true,
      // The parent's loader hooks (a TypeScript loader, say) have nothing to do here.
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    // Between extractions nobody else listens: a thread that dies idle is dropped, never an
    // unhandled 'error' event. During one, the extraction's own listeners report it.
    thread.on('error', () => {});
    thread.once('exit', () => {
      if (idle?.thread !== thread) return;
      clearTimeout(idle.timer);
      idle = undefined;
    });
  }
  thread.postMessage({ kind: 'start', root, stop });
  return thread;
}

/**
 * Takes back a thread whose extraction ended cleanly (every step done, no file open), to be
 * the next one's; stops it when one is already kept. Never throws.
 */
export function releaseTreeWriterThread(thread: Worker): void {
  if (idle !== undefined) {
    void thread.terminate();
    return;
  }
  thread.unref();
  const timer = setTimeout(() => {
    if (idle?.thread !== thread) return;
    idle = undefined;
    void thread.terminate();
  }, IDLE_MS);
  timer.unref();
  idle = { thread, timer };
}

const IDLE_MS = 10_000;
let idle: { thread: Worker; timer: NodeJS.Timeout } | undefined;

const TREE_WRITER_SOURCE = `'use strict';
const { parentPort } = require('node:worker_threads');
const { openSync, writeSync, fchmodSync, closeSync, mkdirSync, lstatSync, chmodSync } = require('node:fs');
const { join } = require('node:path');
const DIRECTORY_MODE = 0o755;
// Set by each extraction's 'start' message.
let root;
let stop;
let fd = -1;
let streamed;
let failed = false;

class Step { constructor(what, error) { this.what = what; this.error = error; } }
function attempt(what, run) {
  try { return run(); } catch (error) { throw new Step(what, error); }
}
function writeAll(handle, data, at, length) {
  for (let done = 0; done < length; ) done += writeSync(handle, data, at + done, length - done);
}
function closeStreamed() {
  if (fd < 0) return;
  const handle = fd;
  fd = -1;
  closeSync(handle);
}
const FOLDER = 0, FILE = 1, OPEN = 2, CHUNK = 3, CLOSE = 4;
function run(op, data) {
  switch (op.kind) {
    case FOLDER: {
      const absolute = join(root, op.path);
      try {
        mkdirSync(absolute, DIRECTORY_MODE);
      } catch (error) {
        // Another spelling of a folder made earlier, on a filesystem that folds case or
        // Unicode form: the same folder, harmless. Anything else there is a conflict.
        if (error.code === 'EEXIST' && attempt('inspect', () => lstatSync(absolute)).isDirectory()) return;
        throw new Step('create folder', error);
      }
      attempt('set mode of', () => chmodSync(absolute, DIRECTORY_MODE));
      return;
    }
    case FILE: {
      // O_EXCL: never follows or replaces anything already there.
      const handle = attempt('create file', () => openSync(join(root, op.path), 'wx', op.mode));
      let failure;
      try {
        writeAll(handle, data, op.at, op.length);
        fchmodSync(handle, op.mode);
      } catch (error) {
        failure = error;
      }
      try { closeSync(handle); } catch (error) { failure = failure || error; }
      if (failure) throw new Step('write file', failure);
      return;
    }
    case OPEN:
      streamed = op;
      fd = attempt('create file', () => openSync(join(root, op.path), 'wx', op.mode));
      return;
    case CHUNK:
      attempt('write file', () => writeAll(fd, data, op.at, op.length));
      return;
    case CLOSE:
      attempt('set mode of', () => fchmodSync(fd, streamed.mode));
      attempt('write file', closeStreamed);
      return;
  }
}
parentPort.on('message', (message) => {
  if (message.kind === 'start') {
    root = message.root;
    stop = new Int32Array(message.stop);
    fd = -1;
    streamed = undefined;
    failed = false;
    return;
  }
  if (message.kind === 'end') {
    try { closeStreamed(); } catch {}
    parentPort.postMessage({ kind: 'ended' });
    return;
  }
  let problem;
  if (!failed) {
    const data = message.data === undefined ? undefined : Buffer.from(message.data);
    const fields = message.fields;
    const names = message.names;
    let name = 0;
    for (let i = 0; i < fields.length; i += 6) {
      if (Atomics.load(stop, 0) !== 0) { failed = true; break; }
      const pathEnd = name + fields[i + 4];
      const entryEnd = pathEnd + fields[i + 5];
      const op = {
        kind: fields[i], mode: fields[i + 1], at: fields[i + 2], length: fields[i + 3],
        path: names.slice(name, pathEnd), entry: names.slice(pathEnd, entryEnd),
      };
      name = entryEnd;
      try {
        run(op, data);
      } catch (thrown) {
        failed = true;
        const at = op.kind === CHUNK || op.kind === CLOSE ? streamed : op;
        const error = thrown instanceof Step ? thrown.error : thrown;
        try { closeStreamed(); } catch {}
        problem = {
          what: thrown instanceof Step ? thrown.what : 'write file',
          path: at.path,
          entry: at.entry,
          code: error && typeof error.code === 'string' ? error.code : undefined,
          errno: error && typeof error.errno === 'number' ? error.errno : undefined,
          syscall: error && typeof error.syscall === 'string' ? error.syscall : undefined,
          message: String(error && error.message),
        };
        break;
      }
    }
  }
  // The buffer goes back to the reading thread, which fills it again: memory it has already
  // touched, instead of a fresh allocation (and its page faults) for every batch.
  if (message.data === undefined) parentPort.postMessage({ kind: 'done', id: message.id, problem });
  else parentPort.postMessage({ kind: 'done', id: message.id, problem, data: message.data }, [message.data]);
});
`;
