import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunOptions, RunResult, Sandbox, SandboxCapabilities } from './sandbox.js';

export interface LocalSandboxOptions {
  /** Parent of private folders; `os.tmpdir()` by default. Never a workspace. */
  privateRoot?: string;
  /**
   * Override the detected transports: `{ ssh: false }` makes an HTTPS-only sandbox.
   * By default HTTPS is always there (the pure JavaScript engine needs nothing installed)
   * and SSH when both `git` and `ssh` can be run.
   */
  capabilities?: Partial<SandboxCapabilities>;
}

/**
 * This machine, as the account running the host. Commands run without a shell and with
 * only the environment they are given, so nothing of the host's own environment (an
 * SSH agent socket, a token variable) reaches them unless a caller puts it there.
 */
export function localSandbox(options: LocalSandboxOptions = {}): Sandbox {
  const privateRoot = options.privateRoot ?? tmpdir();
  const git = options.capabilities?.git ?? canRun('git', ['--version']);
  const capabilities: SandboxCapabilities = {
    https: options.capabilities?.https ?? true,
    ssh: options.capabilities?.ssh ?? (git && canRun('ssh', ['-V'])),
    git,
    inProcess: options.capabilities?.inProcess ?? true,
  };
  return {
    name: 'local',
    capabilities,
    run: runLocal,
    async writeFile(path, data, { mode }) {
      // `wx`: never through an existing name (a planted link would redirect a key); the
      // mode given to open is cut by the umask, so it is set again once the file exists
      // and before any byte of the secret is written.
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.chmod(mode);
        await handle.writeFile(data);
      } finally {
        await handle.close();
      }
    },
    async makePrivateDir() {
      const dir = await mkdtemp(join(privateRoot, 'agentproto-skill-'));
      await chmod(dir, 0o700);
      return dir;
    },
    async removePrivateDir(path) {
      await rm(path, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

/** Programs found once per process: a sandbox per preparation must not pay a spawn for each. */
const runnable = new Map<string, boolean>();

function canRun(command: string, args: string[]): boolean {
  const path = process.env.PATH ?? '/usr/bin:/bin';
  const known = runnable.get(`${path}\0${command}`);
  if (known !== undefined) return known;
  const result = spawnSync(command, args, { stdio: 'ignore', env: { PATH: path } });
  runnable.set(`${path}\0${command}`, result.status === 0);
  return result.status === 0;
}

function runLocal(argv: readonly string[], options: RunOptions): Promise<RunResult> {
  const [command, ...args] = argv;
  if (command === undefined) return Promise.reject(new TypeError('run: empty argv'));
  options.signal?.throwIfAborted();
  return new Promise<RunResult>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // The whole process group: git's own children (remote helpers, ssh) die with it.
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    options.signal?.addEventListener('abort', kill, { once: true });
    child.on('error', (error) => {
      options.signal?.removeEventListener('abort', kill);
      reject(error);
    });
    child.on('close', (code, signal) => {
      options.signal?.removeEventListener('abort', kill);
      if (options.signal?.aborted) reject(options.signal.reason);
      else resolve({ code: code ?? (signal ? 128 : 1), stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) });
    });
    child.stdin.on('error', () => undefined); // a child that exits early closes its stdin
    child.stdin.end(options.stdin ?? '');
  });
}
