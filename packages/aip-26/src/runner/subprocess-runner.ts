import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childProcess } from '../node-builtin.js';
import { type RunValue, assertRunFileInBundle, resolveRun } from '../run/index.js';
import { extractTarGz } from '../tar/index.js';
import { findProgram, pidNamespaceOf, pidNamespacePrefix, processesInNamespace, ProcessTree } from './process-tree.js';

/** What a host hands an AIP-17 runner: the bundle, how to start it, and its limits. */
export interface RunRequest {
  /** The bundle, a tar.gz as `defineCode` makes it: extracted under the archive rules (no link out, no `..`). */
  bundle: Buffer;
  /** The manifest's `run` block: what to start (see `resolveRun`). */
  run: RunValue;
  /**
   * The whole environment of the process: nothing of the host's own is passed on. Default
   * `{}` (then `PATH` is `/usr/bin:/bin` for finding the program).
   */
  env?: Record<string, string>;
  /**
   * AIP-17 `limits.timeout_ms`: everything the bundle started is killed when it runs longer
   * (`timedOut: true`, `signal: 'SIGKILL'`). Default none.
   */
  timeoutMs?: number;
  /** Written to the process's standard input, which is then closed. Default: closed at once. */
  stdin?: string | Buffer;
  /** Ends everything the bundle started, like the timeout. Default none. */
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
  /** Where each run's bundle folder is made (and removed after the run). Default: the system temp folder. */
  workDir?: string;
  /** Most uncompressed bytes extracted from a bundle. Default 256 MiB. */
  maxBytes?: number;
  /** Most files extracted from a bundle. Default 100,000. */
  maxFiles?: number;
  /** Most bytes kept of each of stdout and stderr. Default 8 MiB. */
  maxOutputBytes?: number;
  /**
   * How the runner ends everything the bundle started (see process-tree.ts): `auto` (the
   * default) runs the bundle as init of its own PID namespace where this machine allows
   * one, else walks /proc for its process tree; `process-tree` forces the walk.
   */
  isolation?: 'auto' | 'process-tree';
}

/**
 * The local runner: extracts the bundle safely into a fresh folder, runs the resolved command
 * there (the bundle root is the working directory), passes only the environment the host
 * gives, and removes the folder afterwards. At the timeout, on abort and when the command
 * exits, everything it started is ended before the run returns: its PID namespace, or the
 * process tree found in /proc (see process-tree.ts); a process group is not enough, since
 * `setsid` and a double fork leave it. Making the runner throws nothing; `run` throws:
 *
 * @example
 * ```ts
 * import { defineCode, subprocessRunner } from '@agentproto/aip-26';
 *
 * const runner = subprocessRunner({ maxOutputBytes: 1024 * 1024 });
 * const bundle = await defineCode({ code: manifest.code, workspaceRoot });
 * const result = await runner.run({ bundle, run: manifest.run, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 30_000 });
 * if (result.timedOut || result.exitCode !== 0) console.error(result.stderr.toString());
 * ```
 *
 * @throws {ArchiveError} `UNSAFE_ARCHIVE`: the bundle breaks an archive rule or is over `maxBytes`/`maxFiles`.
 * @throws {ExtractIOError} `AIP26_EXTRACT_IO`: the bundle folder cannot be made or written.
 * @throws {RunResolutionError} `AIP26_RUN_INVALID`: `run` names no runnable thing.
 * @throws {PathError} `AIP26_UNSAFE_PATH`: `run`'s file is not a bundle-internal path.
 * @throws {RunFileMissingError} `AIP26_RUN_FILE_MISSING`: `run`'s file is not in the bundle.
 */
export function subprocessRunner(options: SubprocessRunnerOptions = {}): Runner {
  return {
    async run(request) {
      const work = await mkdtemp(join(options.workDir ?? tmpdir(), 'agentproto-run-'));
      try {
        const bundleRoot = join(work, 'bundle');
        await extractTarGz(request.bundle, bundleRoot, {
          maxBytes: options.maxBytes ?? 256 * 1024 * 1024,
          maxFiles: options.maxFiles ?? 100_000,
        });
        assertRunFileInBundle(request.run, await listFiles(bundleRoot));
        const command = resolveRun(request.run, bundleRoot);
        return await spawnBounded(
          command.cmd,
          command.args,
          bundleRoot,
          request,
          options.maxOutputBytes ?? 8 * 1024 * 1024,
          options.isolation ?? 'auto',
        );
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

function spawnBounded(
  cmd: string,
  args: string[],
  cwd: string,
  request: RunRequest,
  maxOutput: number,
  isolation: 'auto' | 'process-tree',
): Promise<RunResult> {
  const started = performance.now();
  const env = request.env ?? {};
  const namespace = isolation === 'auto' ? pidNamespacePrefix() : undefined;
  // Without a namespace, every process the bundle starts inherits this token (unless it
  // clears its environment), so one re-parented to init is still found by /proc/<pid>/environ.
  const token = `AGENTPROTO_RUN_TOKEN=${randomBytes(16).toString('hex')}`;
  let program = cmd;
  let argv = args;
  let childEnv: Record<string, string> = env;
  if (namespace) {
    // unshare starts the command with execvp and the bundle's environment: it is looked
    // up here as spawn would (env.PATH, else /usr/bin:/bin), and a missing one fails alike.
    const found = findProgram(cmd, env.PATH ?? '/usr/bin:/bin');
    if (found === undefined)
      return Promise.reject(Object.assign(new Error(`spawn ${cmd} ENOENT`), { code: 'ENOENT', path: cmd }));
    program = namespace[0] as string;
    argv = [...namespace.slice(1), found, ...args];
  } else {
    childEnv = { ...env, AGENTPROTO_RUN_TOKEN: token.slice('AGENTPROTO_RUN_TOKEN='.length) };
  }
  return new Promise((resolve, reject) => {
    // Its own process group as well, so a kill before the namespace exists still ends it.
    const child = childProcess().spawn(program, argv, {
      cwd,
      env: childEnv,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout = collect(child.stdout, maxOutput);
    const stderr = collect(child.stderr, maxOutput);
    const tree = !namespace && child.pid !== undefined ? new ProcessTree(child.pid, token) : undefined;
    /** The namespace's init (the bundle's command) and its namespace, once seen. */
    let init: { pid: number; ns: string } | undefined;
    const findInit = () => {
      if (!namespace || init || child.pid === undefined) return;
      const pid = childOf(child.pid);
      const ns = pid === undefined ? undefined : pidNamespaceOf(pid);
      if (pid !== undefined && ns !== undefined && ns !== pidNamespaceOf(process.pid)) init = { pid, ns };
    };
    // While the bundle runs: the walk learns every descendant before its parent can exit.
    const poll = setInterval(() => {
      findInit();
      tree?.scan();
    }, 25);
    let timedOut = false;
    let killed = false;
    let ending: Promise<void> | undefined;
    const endAll = (): Promise<void> => {
      ending ??= (async () => {
        killed = true;
        findInit();
        if (init) {
          // Killing the namespace's init makes the kernel kill every process in it; unshare
          // exits once they are all reaped.
          signalPid(init.pid, 'SIGKILL');
        } else if (child.pid !== undefined) {
          // The namespace may not exist yet: unshare dies, and --kill-child takes its child.
          signalPid(-child.pid, 'SIGKILL');
        }
        if (tree) {
          if (child.pid !== undefined) signalPid(-child.pid, 'SIGKILL');
          await tree.killAll();
        }
      })();
      return ending;
    };
    const timer =
      request.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            void endAll();
          }, request.timeoutMs);
    const onAbort = () => void endAll();
    // An abort that came while the bundle was extracted (before this listener) ends the run at once.
    if (request.signal?.aborted) onAbort();
    else request.signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearInterval(poll);
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    };
    // The command itself ended: whatever it left behind (a daemon holding stdout) is ended
    // too, so the pipes close and nothing outlives the run.
    child.on('exit', () => {
      if (tree) void endAll();
    });
    child.on('error', (error) => {
      settle();
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      settle();
      void (async () => {
        // Nothing the bundle started is alive when the run returns: the namespace is empty
        // (unshare waited for it; checked, bounded), the walked tree is dead.
        if (init) await untilEmpty(init.ns, 5000);
        if (tree) await endAll();
        // unshare reports its child's death by SIGKILL as exit code 1; the command was killed.
        const byUs = namespace !== undefined && killed && signal === null;
        resolve({
          exitCode: byUs ? null : exitCode,
          signal: byUs ? 'SIGKILL' : signal,
          timedOut,
          stdout: stdout(),
          stderr: stderr(),
          durationMs: performance.now() - started,
        });
      })();
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(request.stdin ?? '');
  });
}

/** The one child of `parent` (unshare's forked init), from /proc. */
function childOf(parent: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'latin1').trim();
    const first = children.split(' ')[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

function signalPid(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

async function untilEmpty(ns: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processesInNamespace(ns).length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
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
