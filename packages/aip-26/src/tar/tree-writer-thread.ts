import { Worker } from 'node:worker_threads';

/** One filesystem step, in archive order. Paths are relative to the staging folder. */
export type TreeOp =
  | { kind: 'folder'; path: string; entry: string }
  | { kind: 'file'; path: string; entry: string; mode: number; at: number; length: number }
  | { kind: 'open'; path: string; entry: string; mode: number }
  | { kind: 'chunk'; at: number; length: number }
  | { kind: 'close' };

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

export type TreeReply = { kind: 'done'; id: number; problem?: TreeProblem } | { kind: 'ended' };

/**
 * Starts the thread that performs the steps: each batch arrives as one message (ops and one
 * transferred buffer holding their data) and is done with plain synchronous calls, so a file
 * costs open + write + fchmod + close and no hop through the event loop or the thread pool.
 * After the first failure it does nothing more; a non-zero `stop[0]` stops it between steps.
 * Plain JavaScript, evaluated as such: it runs the same from sources and from a build.
 */
export function startTreeWriterThread(root: string, stop: SharedArrayBuffer): Worker {
  return new Worker(TREE_WRITER_SOURCE, {
    eval: true,
    workerData: { root, stop },
    // The parent's loader hooks (a TypeScript loader, say) have nothing to do here.
    execArgv: [],
    stdout: false,
    stderr: false,
  });
}

const TREE_WRITER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, writeSync, fchmodSync, closeSync, mkdirSync, lstatSync, chmodSync } = require('node:fs');
const { join } = require('node:path');
const root = workerData.root;
const stop = new Int32Array(workerData.stop);
const DIRECTORY_MODE = 0o755;
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
function run(op, data) {
  switch (op.kind) {
    case 'folder': {
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
    case 'file': {
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
    case 'open':
      streamed = op;
      fd = attempt('create file', () => openSync(join(root, op.path), 'wx', op.mode));
      return;
    case 'chunk':
      attempt('write file', () => writeAll(fd, data, op.at, op.length));
      return;
    case 'close':
      attempt('set mode of', () => fchmodSync(fd, streamed.mode));
      attempt('write file', closeStreamed);
      return;
  }
}
parentPort.on('message', (message) => {
  if (message.kind === 'end') {
    try { closeStreamed(); } catch {}
    parentPort.postMessage({ kind: 'ended' });
    return;
  }
  let problem;
  if (!failed) {
    const data = message.data === undefined ? undefined : Buffer.from(message.data);
    for (const op of message.ops) {
      if (Atomics.load(stop, 0) !== 0) { failed = true; break; }
      try {
        run(op, data);
      } catch (thrown) {
        failed = true;
        const at = op.path === undefined ? streamed : op;
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
  parentPort.postMessage({ kind: 'done', id: message.id, problem });
});
`;
