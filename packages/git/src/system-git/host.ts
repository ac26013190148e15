import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';

export interface CommandRunOptions {
  /** The child's whole environment: nothing is added to it. */
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** Written to the child's standard input, which is then closed. */
  stdin?: string | Uint8Array;
  /** Kills the child (and what it started) when it fires. */
  signal?: AbortSignal;
}

export interface CommandResult {
  code: number;
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * Where the system-git engine runs its commands: this machine by default, or a sandbox
 * (a container, a VM) with the same two members. Structurally identical to a sandbox's
 * `run` and `writeFile`, so one can be passed as is.
 */
export interface CommandHost {
  /**
   * Runs `argv` without a shell, with exactly `options.env` as its environment. Resolves
   * with the exit code, also when it is not 0; rejects only when the program cannot be
   * started, or with the signal's reason once `options.signal` fires (the process is then
   * killed, with every process it started).
   */
  run(argv: readonly string[], options: CommandRunOptions): Promise<CommandResult>;
  /** Creates the file with exactly `mode`; fails if the name exists. */
  writeFile(path: string, data: string | Uint8Array, options: { mode: number }): Promise<void>;
}

/**
 * This machine. Commands get the environment they are given and nothing of this process's
 * own (no SSH agent socket, no token variable), and no shell ever re-reads an argument.
 */
export function localCommandHost(): CommandHost {
  return {
    run: runLocal,
    async writeFile(path, data, { mode }) {
      // `wx`: never through an existing name, which could be a link planted to redirect a
      // credential. The mode given to open is cut by the umask, so it is set again, exactly,
      // before the first byte of the content is written.
      const handle = await open(path, 'wx', mode & 0o600);
      try {
        await handle.chmod(mode);
        await handle.writeFile(data);
      } finally {
        await handle.close();
      }
    },
  };
}

function runLocal(argv: readonly string[], options: CommandRunOptions): Promise<CommandResult> {
  const [command, ...args] = argv;
  if (command === undefined) return Promise.reject(new TypeError('run: empty argv'));
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<CommandResult>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      // A copy of exactly what was given: spawn adds nothing when `env` is set.
      env: { ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so an abort kills git's own children too (the remote
      // helper, ssh), which would otherwise go on writing into a folder being removed.
      detached: true,
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    signal?.addEventListener('abort', kill, { once: true });
    child.on('error', (error) => {
      signal?.removeEventListener('abort', kill);
      reject(error);
    });
    // Settles once the process has exited and its pipes are closed: after an abort the
    // caller may remove the folder it worked in, and nothing is left to write there.
    child.on('close', (code, killedBy) => {
      signal?.removeEventListener('abort', kill);
      if (signal?.aborted) reject(signal.reason);
      else
        resolve({ code: code ?? (killedBy ? 128 : 1), stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) });
    });
    child.stdin.on('error', () => undefined); // a child that exits early closes its stdin
    child.stdin.end(options.stdin ?? '');
  });
}
