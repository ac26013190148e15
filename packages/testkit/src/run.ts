import { spawn } from 'node:child_process';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. */
  input?: string | Buffer;
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Thrown when a command exits non-zero; carries what it printed so a failing test says why. */
export class CommandFailedError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`${command} exited with ${signal ?? exitCode}: ${stderr.trim() || stdout.trim()}`);
    this.name = 'CommandFailedError';
  }
}

/**
 * Runs a program without a shell (so no argument is ever re-parsed) and resolves with its
 * output once it exits 0; rejects with CommandFailedError otherwise.
 */
export function run(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A child that exits early closes its stdin; that EPIPE is reported through the exit code.
    child.stdin.on('error', () => {});
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const out = Buffer.concat(stdout).toString('utf8');
      const err = Buffer.concat(stderr).toString('utf8');
      if (code === 0) resolve({ stdout: out, stderr: err });
      else reject(new CommandFailedError([file, ...args].join(' '), code, signal, out, err));
    });
    child.stdin.end(options.input);
  });
}
