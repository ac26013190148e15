import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunValue, assertRunFileInBundle, resolveRun } from '../run/index.js';
import { extractTarGz } from '../tar/index.js';

/** What a host hands an AIP-17 runner: the bundle, how to start it, and its limits. */
export interface RunRequest {
  bundle: Buffer;
  run: RunValue;
  /** The whole environment of the process: nothing of the host's own is passed on. */
  env?: Record<string, string>;
  /** AIP-17 `limits.timeout_ms`: the process group is killed when it runs longer. */
  timeoutMs?: number;
  stdin?: string | Buffer;
  signal?: AbortSignal;
}

export interface RunResult {
  exitCode: number | null;
  /** The signal that ended the process, e.g. SIGKILL after a timeout. */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: Buffer;
  stderr: Buffer;
  durationMs: number;
}

/** An AIP-17 runner: starts a materialized bundle. */
export interface Runner {
  run(request: RunRequest): Promise<RunResult>;
}

export interface SubprocessRunnerOptions {
  /** Where each run's bundle folder is made. Default: the system temp folder. */
  workDir?: string;
  /** Extraction limits for the bundle. */
  maxBytes?: number;
  maxFiles?: number;
  /** Most bytes kept of each of stdout and stderr. Default 8 MiB. */
  maxOutputBytes?: number;
}

/**
 * The local runner: extracts the bundle safely into a fresh folder, runs the resolved command
 * there (the bundle root is the working directory), enforces the timeout on the whole process
 * group, passes only the environment the host gives, and removes the folder afterwards.
 */
export function subprocessRunner(options: SubprocessRunnerOptions = {}): Runner {
  return {
    async run(request) {
      const work = await mkdtemp(join(options.workDir ?? tmpdir(), 'agentproto-run-'));
      try {
        const bundleRoot = join(work, 'bundle');
        await extractTarGz(request.bundle, bundleRoot, { maxBytes: options.maxBytes ?? 256 * 1024 * 1024, maxFiles: options.maxFiles ?? 100_000 });
        assertRunFileInBundle(request.run, await listFiles(bundleRoot));
        const command = resolveRun(request.run, bundleRoot);
        return await spawnBounded(command.cmd, command.args, bundleRoot, request, options.maxOutputBytes ?? 8 * 1024 * 1024);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  };
}

/** The bundle's files, relative and `/`-separated (walked by hand: Dirent.parentPath needs Node 20.12). */
async function listFiles(root: string, rel = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true })) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) files.push(...(await listFiles(root, path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

function spawnBounded(cmd: string, args: string[], cwd: string, request: RunRequest, maxOutput: number): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout ends what the command started too (bash -c, npm).
    const child = spawn(cmd, args, { cwd, env: request.env ?? {}, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout = collect(child.stdout, maxOutput);
    const stderr = collect(child.stderr, maxOutput);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = request.timeoutMs === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      killGroup();
    }, request.timeoutMs);
    const onAbort = () => killGroup();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      resolve({ exitCode, signal, timedOut, stdout: stdout(), stderr: stderr(), durationMs: performance.now() - started });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(request.stdin ?? '');
  });
}

/** Gathers a stream's bytes up to a limit; the rest is read and dropped so the child never blocks. */
function collect(stream: NodeJS.ReadableStream, max: number): () => Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    if (size >= max) return;
    chunks.push(chunk.subarray(0, max - size));
    size += Math.min(chunk.length, max - size);
  });
  return () => Buffer.concat(chunks);
}
