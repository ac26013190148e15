import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const worker = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** Starts worker.ts in its own Node process, resolving workspace packages from source. */
export function spawnWorker(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--conditions=@agentproto/source', '--import', 'tsx', worker, ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves with everything the child printed once it exits; rejects on a non-zero exit. */
export function finished(child: ChildProcess): Promise<string> {
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk));
  return new Promise((resolve, reject) => {
    // 'close', not 'exit': only then has all of the child's output been read.
    child.on('close', (code, signal) =>
      code === 0 ? resolve(out) : reject(new Error(`worker exited ${code ?? signal}: ${err}`)),
    );
  });
}

/** Waits until the child prints `line`. */
export function printed(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk));
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk;
      if (seen.split('\n').includes(line)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`worker exited ${code} before printing ${line}: ${err}`)));
  });
}
