import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { constants } from 'node:os';
import { isAbsolute, normalize } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { checkSandbox, usrMergeLinks } from './check.js';
import type { EgressProxy } from './egress-proxy.js';
import { SandboxSpecError, SandboxUnavailableError } from './errors.js';

/** A host folder seen inside the sandbox. */
export interface Mount {
  /** Absolute host path; it must exist. */
  source: string;
  /** Absolute path inside the sandbox. */
  target: string;
  /** Writable; read-only by default. */
  writable?: boolean;
}

/** Per-process caps, set as rlimits before the command starts (see the README for what each one covers). */
export interface ProcessLimits {
  /** RLIMIT_DATA in MiB: the heap and private writable mappings of each process. */
  memoryMb?: number;
  /** RLIMIT_CPU in ms, rounded up to whole seconds (the kernel's unit): SIGXCPU, then SIGKILL a second later. */
  cpuMs?: number;
  /** Processes the sandbox may have at once (RLIMIT_NPROC of its account). */
  maxProcesses?: number;
  /** RLIMIT_FSIZE in MiB: the largest file a process may write. */
  maxFileMb?: number;
}

export interface IsolatedCommand {
  /** The program and its arguments, no shell. A name without `/` is looked up in `env.PATH` inside the sandbox. */
  argv: readonly string[];
  /** The whole environment: nothing of the host's is added. Default `{}`. */
  env?: Readonly<Record<string, string>>;
  /** Working folder inside the sandbox. Default `/`. */
  cwd?: string;
  /** Host folders and files the sandbox sees; nothing else of the host's is there (besides `system`). */
  mounts?: readonly Mount[];
  /**
   * The system folders, read-only: /usr (with /bin, /lib, … as this machine links them), the
   * dynamic linker's cache, TLS certificates and /etc/alternatives; a /etc/passwd and
   * /etc/group naming only root, the sandbox's account and nobody; /proc of its own PID
   * namespace, a minimal /dev. Default true. No home, no /etc/shadow, no /run, no /tmp.
   */
  system?: boolean;
  /** Reach granted hosts through this proxy: the sandbox gets `127.0.0.1:3128` bridged to it. Default: no network at all. */
  egress?: EgressProxy;
  limits?: ProcessLimits;
  /**
   * The host account the sandbox runs as. Default: this process's, except root, which runs
   * sandboxes as nobody (65534) so that `maxProcesses` holds (the kernel exempts root from it).
   */
  runAs?: { uid: number; gid: number };
  /** Wall-clock cap: the whole sandbox is killed (every process in it). */
  timeoutMs?: number;
  /** Kills the whole sandbox when it fires. */
  signal?: AbortSignal;
}

/** How a sandboxed command ended. */
export type ExitReason =
  | { kind: 'exit'; code: number }
  | { kind: 'signal'; signal: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'memory'; signal: string | null; code: number | null }
  | { kind: 'cpu'; signal: string };

export interface IsolatedExit {
  reason: ExitReason;
  /** The command's exit code, or null when a signal ended it. */
  code: number | null;
  signal: string | null;
  durationMs: number;
}

/** A running sandboxed command. */
export interface IsolatedProcess {
  /** Host pid of the bwrap process that holds the sandbox. */
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the command and every process it started are gone. */
  readonly exited: Promise<IsolatedExit>;
  /** Kills every process in the sandbox. */
  kill(): void;
}

/** The address a sandbox with `egress` reaches the proxy at: put it in HTTPS_PROXY, git's http.proxy, … */
export const SANDBOX_PROXY = { host: '127.0.0.1', port: 3128, url: 'http://127.0.0.1:3128' } as const;

const PROXY_TARGET = '/run/agentproto-egress';
const NOBODY = { uid: 65534, gid: 65534 };

/** The account a command runs as by default: this process's, or nobody for root. */
export function defaultRunAs(): { uid: number; gid: number } {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  return uid === 0 ? NOBODY : { uid, gid };
}

/**
 * Starts `argv` inside bubblewrap: its own user, PID, network, mount, IPC, UTS and cgroup
 * namespaces, seeing only `mounts` and the read-only system folders, with exactly `env`.
 * It is killed with everything it started when this process dies (`--die-with-parent`),
 * at `timeoutMs`, on `signal` or `kill()`; nothing in its PID namespace outlives it.
 *
 * @example
 * ```ts
 * import { spawnIsolated } from '@agentproto/sandbox';
 *
 * const child = spawnIsolated({ argv: ['node', '/app/main.js'], env: { PATH: '/usr/bin' }, mounts: [{ source: appDir, target: '/app' }] });
 * child.stdout.pipe(process.stdout);
 * const { reason } = await child.exited;
 * ```
 *
 * @throws {SandboxUnavailableError} `SANDBOX_UNAVAILABLE`: this machine cannot isolate (checked once per process).
 * @throws {SandboxSpecError} `SANDBOX_SPEC_INVALID`: a mount or the working folder is not absolute or does not exist.
 */
export function spawnIsolated(command: IsolatedCommand): IsolatedProcess {
  const runAs = command.runAs ?? defaultRunAs();
  const support = checkSandbox({ runAs });
  if (command.egress && support.socat === undefined)
    throw new SandboxUnavailableError('socat-missing', 'no socat in PATH');
  const argv = command.argv;
  if (argv.length === 0 || typeof argv[0] !== 'string' || argv[0] === '')
    throw new SandboxSpecError('argv', String(argv[0] ?? ''), 'names no program');
  const cwd = command.cwd ?? '/';
  if (!isAbsolute(cwd)) throw new SandboxSpecError('cwd', cwd, 'is not an absolute path');
  const data: string[] = [];
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
    '--info-fd',
    '3',
  ];
  if (command.system ?? true) args.push(...systemArgs(runAs, data));
  else args.push('--proc', '/proc', '--dev', '/dev');
  (command.mounts ?? []).forEach((mount, index) => {
    if (!isAbsolute(mount.source))
      throw new SandboxSpecError(`mounts[${index}].source`, mount.source, 'is not an absolute path');
    if (!isAbsolute(mount.target) || normalize(mount.target) === '/')
      throw new SandboxSpecError(`mounts[${index}].target`, mount.target, 'is not an absolute path below /');
    if (normalize(mount.target).startsWith(PROXY_TARGET))
      throw new SandboxSpecError(`mounts[${index}].target`, mount.target, 'is reserved for the egress proxy');
    if (!existsSync(mount.source))
      throw new SandboxSpecError(`mounts[${index}].source`, mount.source, 'does not exist');
    args.push(mount.writable ? '--bind' : '--ro-bind', mount.source, normalize(mount.target));
  });
  if (command.egress) args.push('--ro-bind', command.egress.folder, PROXY_TARGET);
  args.push('--chdir', cwd, '--', ...wrapper(command, support.socat, runAs), ...argv);

  const started = performance.now();
  const stdio: ('pipe' | 'ignore')[] = ['pipe', 'pipe', 'pipe', 'pipe', ...data.map(() => 'pipe' as const)];
  const child = spawn(support.bwrap, args, {
    env: { ...(command.env ?? {}) },
    stdio,
    detached: true,
    ...(runAs.uid !== process.getuid?.() || runAs.gid !== process.getgid?.() ? runAs : {}),
  });
  data.forEach((content, index) => {
    const stream = child.stdio[4 + index] as Writable | null;
    stream?.on('error', () => undefined);
    stream?.end(content);
  });

  let namespace: string | undefined;
  const info = child.stdio[3] as Readable | null;
  const infoChunks: Buffer[] = [];
  info?.on('data', (chunk: Buffer) => {
    infoChunks.push(chunk);
    // {"child-pid": N}: the sandbox's init, whose PID namespace every process in it shares.
    const pid = /"child-pid"\s*:\s*(\d+)/.exec(Buffer.concat(infoChunks).toString('latin1'))?.[1];
    if (pid !== undefined && namespace === undefined) namespace = pidNamespaceOf(Number(pid));
  });
  info?.on('error', () => undefined);

  // The last bytes of stderr: how a failed allocation is told from any other failure.
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('latin1')).slice(-4096);
  });

  let killedFor: 'timeout' | 'aborted' | undefined;
  const kill = (why?: 'timeout' | 'aborted') => {
    killedFor ??= why;
    // bwrap's init dies with it (--die-with-parent), and with the init the kernel kills
    // every process of the PID namespace.
    if (child.pid !== undefined) signal(-child.pid, 'SIGKILL');
  };
  const timer = command.timeoutMs === undefined ? undefined : setTimeout(() => kill('timeout'), command.timeoutMs);
  const onAbort = () => kill('aborted');
  if (command.signal?.aborted) queueMicrotask(onAbort);
  else command.signal?.addEventListener('abort', onAbort, { once: true });

  const exited = new Promise<IsolatedExit>((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      command.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.once('close', (exitCode, exitSignal) => {
      clearTimeout(timer);
      command.signal?.removeEventListener('abort', onAbort);
      void (async () => {
        if (namespace !== undefined) await untilEmpty(namespace, 5000);
        const durationMs = performance.now() - started;
        // bwrap reports a command killed by signal N as exit status 128 + N, as a shell does.
        const byStatus = exitCode !== null && exitCode > 128 && exitCode < 128 + 65 ? signalName(exitCode - 128) : null;
        const sig = exitSignal ?? byStatus;
        const code = sig === null ? exitCode : null;
        resolve({ reason: reasonOf(killedFor, code, sig, command.limits, stderrTail), code, signal: sig, durationMs });
      })();
    });
  });
  child.stdin?.on('error', () => undefined);
  return {
    get pid() {
      return child.pid ?? -1;
    },
    stdin: child.stdin as Writable,
    stdout: child.stdout as Readable,
    stderr: child.stderr as Readable,
    exited,
    kill: () => kill(),
  };
}

/** A failed allocation, as runtimes and libc report it. */
const OUT_OF_MEMORY = /out of memory|cannot allocate memory|MemoryError|bad_alloc|Allocation failed|ENOMEM/i;

function reasonOf(
  killedFor: 'timeout' | 'aborted' | undefined,
  code: number | null,
  sig: string | null,
  limits: ProcessLimits | undefined,
  stderrTail: string,
): ExitReason {
  if (killedFor === 'timeout') return { kind: 'timeout' };
  if (killedFor === 'aborted') return { kind: 'aborted' };
  if (limits?.cpuMs !== undefined && (sig === 'SIGXCPU' || (sig === 'SIGKILL' && /\bSIGXCPU\b/.test(stderrTail))))
    return { kind: 'cpu', signal: sig };
  if (limits?.memoryMb !== undefined && (code !== 0 || sig !== null) && OUT_OF_MEMORY.test(stderrTail))
    return { kind: 'memory', signal: sig, code };
  if (sig !== null) return { kind: 'signal', signal: sig };
  return { kind: 'exit', code: code ?? 0 };
}

/** The programs between bwrap and the command: the egress bridge, then the limits. */
function wrapper(command: IsolatedCommand, socat: string | undefined, runAs: { uid: number }): string[] {
  const prefix: string[] = [];
  if (command.egress && socat !== undefined) {
    // socat listens on the sandbox's own loopback and hands each connection to the proxy's
    // socket; the command starts once the port is listening (/proc/net/tcp of this netns).
    const port = SANDBOX_PROXY.port.toString(16).toUpperCase().padStart(4, '0');
    const script = [
      `${socat} TCP-LISTEN:${SANDBOX_PROXY.port},bind=${SANDBOX_PROXY.host},reuseaddr,fork UNIX-CONNECT:${PROXY_TARGET}/proxy.sock </dev/null >/dev/null 2>&1 &`,
      `until grep -q ':${port} 00000000:0000 0A' /proc/net/tcp; do :; done`,
      'exec "$@"',
    ].join('\n');
    prefix.push('/bin/sh', '-c', script, 'sh');
  }
  const limits = command.limits;
  if (limits && Object.values(limits).some((value) => value !== undefined)) {
    const rlimits: string[] = ['--core=0'];
    if (limits.memoryMb !== undefined) rlimits.push(`--data=${mib(limits.memoryMb)}`);
    if (limits.cpuMs !== undefined) {
      const seconds = Math.max(1, Math.ceil(limits.cpuMs / 1000));
      rlimits.push(`--cpu=${seconds}:${seconds + 1}`);
    }
    if (limits.maxProcesses !== undefined) rlimits.push(`--nproc=${limits.maxProcesses + countProcesses(runAs.uid)}`);
    if (limits.maxFileMb !== undefined) rlimits.push(`--fsize=${mib(limits.maxFileMb)}`);
    prefix.push('/usr/bin/prlimit', ...rlimits, '--');
  }
  return prefix;
}

function mib(value: number): string {
  return String(Math.max(1, Math.floor(value)) * 1024 * 1024);
}

/**
 * Processes (threads, as the kernel counts them) the account has now, outside this
 * sandbox: RLIMIT_NPROC counts every one of the account's, so the cap is what it has plus
 * what the sandbox may add.
 */
function countProcesses(uid: number): number {
  let count = 0;
  for (const name of readdirSafe('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'latin1');
      const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      if (real !== undefined && Number(real) === uid) count += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
    } catch {
      // Gone.
    }
  }
  return count;
}

function systemArgs(runAs: { uid: number; gid: number }, data: string[]): string[] {
  const args = ['--ro-bind', '/usr', '/usr', ...usrMergeLinks(), '--proc', '/proc', '--dev', '/dev'];
  for (const path of [
    '/etc/ld.so.cache',
    '/etc/ld.so.conf',
    '/etc/ld.so.conf.d',
    '/etc/alternatives',
    '/etc/ssl',
    '/etc/ca-certificates',
    '/etc/localtime',
  ]) {
    if (existsSync(path)) args.push('--ro-bind', path, path);
  }
  const files: Record<string, string> = {
    '/etc/passwd': `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${runAs.uid}:${runAs.gid}:sandbox:/:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    '/etc/group': `root:x:0:\nsandbox:x:${runAs.gid}:\nnogroup:x:65534:\n`,
    '/etc/hosts': '127.0.0.1 localhost\n::1 localhost\n',
  };
  for (const [target, content] of Object.entries(files)) {
    args.push('--ro-bind-data', String(4 + data.length), target);
    data.push(content);
  }
  return args;
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function pidNamespaceOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/**
 * Pids of the live processes in PID namespace `ns` (e.g. `pid:[4026532]`), from /proc. A
 * zombie is not counted: it runs nothing and holds nothing but its exit status (the
 * sandbox's init can be left one for a moment, reparented to this machine's init).
 */
export function processesInNamespace(ns: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSafe('/proc')) {
    if (!/^\d+$/.test(name) || pidNamespaceOf(Number(name)) !== ns) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') pids.push(Number(name));
    } catch {
      // Gone.
    }
  }
  return pids;
}

async function untilEmpty(ns: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processesInNamespace(ns).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

function signalName(number: number): string {
  const found = Object.entries(constants.signals).find(([, value]) => value === number);
  return found ? found[0] : `SIG${number}`;
}
