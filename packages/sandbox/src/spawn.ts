import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { isAbsolute, normalize } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { checkSandbox, usrMergeLinks } from './check.js';
import type { EgressProxy } from './egress-proxy.js';
import { SandboxSetupError, SandboxSpecError, SandboxUnavailableError } from './errors.js';

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

/** What `spawnIsolated` runs, and how it is confined. */
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
  /** Per-process caps. Default: none. */
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

/** How a sandboxed command ended, once nothing of its sandbox is left. */
export interface IsolatedExit {
  /** Why it ended (see the README for how each reason is decided). */
  reason: ExitReason;
  /** The command's exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it (`SIGKILL`, …), or null when it exited. */
  signal: string | null;
  /** From spawn until nothing of the sandbox was left. */
  durationMs: number;
}

/** A running sandboxed command. */
export interface IsolatedProcess {
  /** Host pid of the bwrap process that holds the sandbox. */
  readonly pid: number;
  /** The command's standard input. */
  readonly stdin: Writable;
  /** The command's standard output. */
  readonly stdout: Readable;
  /** The command's standard error (and bubblewrap's own messages). */
  readonly stderr: Readable;
  /** Settles when the command and every process it started are gone. */
  readonly exited: Promise<IsolatedExit>;
  /** Kills every process in the sandbox. */
  kill(): void;
}

/** The address a sandbox with `egress` reaches the proxy at: put it in HTTPS_PROXY, git's http.proxy, … */
export const SANDBOX_PROXY = { host: '127.0.0.1', port: 3128, url: 'http://127.0.0.1:3128' } as const;

const PROXY_TARGET = '/run/agentproto-egress';
/** bwrap's --json-status-fd. */
const STATUS_FD = 3;
/** Where the egress bridge says it listens (only with egress). */
const READY_FD = 4;
/** The first of the pipes bwrap reads: `--args` (the environment), then file contents. */
const INPUT_FD = 5;
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
 * @throws {SandboxSpecError} `SANDBOX_SPEC_INVALID`: a mount or the working folder is not absolute or does not exist, an environment name is not one, a limit is not a positive number, `maxProcesses` is asked of root, or `egress` is closed or belongs to another account.
 * @throws {SandboxSetupError} `SANDBOX_SETUP_FAILED` (`exited` rejects with it): bwrap refused a mount or could not start the program, or the egress bridge did not come up; the command never ran.
 */
export function spawnIsolated(command: IsolatedCommand): IsolatedProcess {
  const runAs = command.runAs ?? defaultRunAs();
  const argv = command.argv;
  if (argv.length === 0 || typeof argv[0] !== 'string' || argv[0] === '')
    throw new SandboxSpecError('argv', String(argv[0] ?? ''), 'names no program');
  const program = argv[0];
  for (const [name, value] of Object.entries(command.limits ?? {})) {
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      throw new SandboxSpecError(`limits.${name}`, String(value), 'is not a positive number');
  }
  if (command.limits?.maxProcesses !== undefined && runAs.uid === 0)
    throw new SandboxSpecError('runAs', '0', 'is root, whom the kernel exempts from maxProcesses (RLIMIT_NPROC)');
  if (command.timeoutMs !== undefined && !(command.timeoutMs >= 0))
    throw new SandboxSpecError('timeoutMs', String(command.timeoutMs), 'is not a number of milliseconds');
  const cwd = command.cwd ?? '/';
  if (!isAbsolute(cwd)) throw new SandboxSpecError('cwd', cwd, 'is not an absolute path');
  // The environment reaches bwrap through a pipe (`--args`), never through bwrap's own
  // environment (LD_PRELOAD and the like would act on bwrap, outside the sandbox) nor its
  // command line (readable by every account in /proc/<pid>/cmdline).
  const envArgs: string[] = ['--clearenv'];
  for (const [name, value] of Object.entries(command.env ?? {})) {
    if (name === '' || name.includes('=') || name.includes('\0'))
      throw new SandboxSpecError('env', name, 'is not an environment variable name');
    if (typeof value !== 'string' || value.includes('\0'))
      throw new SandboxSpecError(`env.${name}`, name, 'has a value that is not a string without NUL');
    envArgs.push('--setenv', name, value);
  }
  const inputs: string[] = [`${envArgs.join('\0')}\0`];
  const support = checkSandbox({ runAs });
  if (command.egress && support.socat === undefined)
    throw new SandboxUnavailableError('socat-missing', 'no socat in PATH');
  const args = [
    '--unshare-all',
    // A user namespace for sure (not "if it can"), and none inside it: a sandboxed process
    // cannot make user namespaces of its own (less of the kernel within its reach).
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
    '--json-status-fd',
    String(STATUS_FD),
    '--args',
    String(INPUT_FD),
  ];
  if (command.system ?? true) args.push(...systemArgs(runAs, inputs));
  else args.push('--proc', '/proc', '--dev', '/dev');
  // /dev is a tmpfs of bwrap's: made read-only below, once every mount point in it exists,
  // so the only memory-backed place a command can write is /dev/shm, whose size is bounded.
  args.push('--size', String(shmBytes(command.limits)), '--tmpfs', '/dev/shm');
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
  if (command.egress) {
    // The proxy's folder is 0700: a sandbox of another account could not reach the socket.
    const owner = ownerOf(command.egress.folder);
    if (owner === undefined)
      throw new SandboxSpecError('egress', command.egress.folder, 'is closed (the proxy folder is gone)');
    if (owner !== runAs.uid)
      throw new SandboxSpecError(
        'egress',
        command.egress.folder,
        `belongs to uid ${owner}, but the sandbox runs as uid ${runAs.uid} (start the proxy with owner: runAs)`,
      );
    args.push('--ro-bind', command.egress.folder, PROXY_TARGET);
  }
  // The root is bwrap's own tmpfs: read-only once every mount is made, so the writable
  // mounts are the only places a command can write (nothing lands in / or /etc, and no
  // memory is filled through files there).
  args.push('--remount-ro', '/');
  args.push('--remount-ro', '/dev', '--chdir', cwd, '--', ...wrapper(command, support.socat, runAs), ...argv);

  const started = performance.now();
  const stdio: ('pipe' | 'ignore' | number)[] = [
    'pipe',
    'pipe',
    'pipe',
    'pipe',
    command.egress ? 'pipe' : 'ignore',
    ...inputs.map(() => 'pipe' as const),
  ];
  // A descriptor this process inherited without close-on-exec would pass through bwrap into
  // the sandbox (Node's own are close-on-exec): each is replaced by /dev/null in the child.
  for (const fd of inheritableDescriptors()) {
    if (fd < stdio.length) continue;
    while (stdio.length < fd) stdio.push('ignore');
    stdio.push(devNull());
  }
  const child = spawn(support.bwrap, args, {
    env: {},
    stdio,
    detached: true,
    ...(runAs.uid !== process.getuid?.() || runAs.gid !== process.getgid?.() ? runAs : {}),
  });
  inputs.forEach((content, index) => {
    const stream = child.stdio[INPUT_FD + index] as Writable | null;
    stream?.on('error', () => undefined);
    stream?.end(content);
  });

  // bwrap's status: {"child-pid": N, "pid-namespace": I, …} once the namespaces exist, then
  // {"exit-code": N} only if setup succeeded and the command ran. The first document is
  // written before the command starts, so the command cannot forge it.
  let initPid: number | undefined;
  let namespace: string | undefined;
  let ranCommand = false;
  const status = child.stdio[STATUS_FD] as Readable | null;
  let statusText = '';
  status?.on('data', (chunk: Buffer) => {
    statusText = (statusText + chunk.toString('latin1')).slice(0, 64 * 1024);
    if (initPid === undefined) {
      const pid = /"child-pid"\s*:\s*(\d+)/.exec(statusText)?.[1];
      const ns = /"pid-namespace"\s*:\s*(\d+)/.exec(statusText)?.[1];
      if (pid !== undefined && ns !== undefined) {
        initPid = Number(pid);
        namespace = `pid:[${ns}]`;
        if (killedFor !== undefined) signal(initPid, 'SIGKILL');
      }
    }
    if (/"exit-code"\s*:/.test(statusText)) ranCommand = true;
  });
  status?.on('error', () => undefined);
  // With egress, the bridge writes here once it listens, before the command starts.
  let bridgeUp = command.egress === undefined;
  const ready = child.stdio[READY_FD] as Readable | null;
  ready?.on('data', () => {
    bridgeUp = true;
  });
  ready?.on('error', () => undefined);

  // The last bytes of stderr: how a failed allocation is told from any other failure, and
  // what bwrap said when it could not set the sandbox up.
  let stderrTail = '';
  let saidOutOfMemory = false;
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('latin1');
    // Each chunk with the end of the one before: a message split across two still counts,
    // and a long stack trace after it does not push it out.
    saidOutOfMemory ||= OUT_OF_MEMORY.test(stderrTail.slice(-256) + text);
    stderrTail = (stderrTail + text).slice(-4096);
  });

  let killedFor: 'timeout' | 'aborted' | 'killed' | undefined;
  let closed = false;
  const kill = (why: 'timeout' | 'aborted' | 'killed') => {
    if (closed) return;
    killedFor ??= why;
    // bwrap's process group (bwrap and, until it starts its own session, the sandbox's
    // init), then the init itself once known: with the init the kernel kills every process
    // of the PID namespace, and the init dies with bwrap anyway (--die-with-parent).
    if (child.pid !== undefined) signal(-child.pid, 'SIGKILL');
    // (Checked to still be the sandbox's init: a pid is reused once its process is reaped.)
    if (initPid !== undefined && pidNamespaceOf(initPid) === namespace) signal(initPid, 'SIGKILL');
  };
  const timer = command.timeoutMs === undefined ? undefined : setTimeout(() => kill('timeout'), command.timeoutMs);
  const onAbort = () => kill('aborted');
  if (command.signal?.aborted) queueMicrotask(onAbort);
  else command.signal?.addEventListener('abort', onAbort, { once: true });

  const exited = new Promise<IsolatedExit>((resolve, reject) => {
    child.once('error', (error) => {
      closed = true;
      clearTimeout(timer);
      command.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.once('close', (exitCode, exitSignal) => {
      // bwrap is reaped and its init with it: their pids may be reused from now on.
      closed = true;
      clearTimeout(timer);
      command.signal?.removeEventListener('abort', onAbort);
      void (async () => {
        if (namespace !== undefined) await untilEmpty(namespace, initPid, 5000);
        const durationMs = performance.now() - started;
        if (killedFor === undefined && exitSignal === null && (!ranCommand || !bridgeUp)) {
          const said = stderrTail
            .split('\n')
            .filter((line) => line.startsWith('bwrap: ') || line.startsWith('sandbox: '))
            .join('; ');
          reject(new SandboxSetupError(program, said || `bwrap exited ${exitCode} before the command ran`));
          return;
        }
        // bwrap reports a command killed by signal N as exit status 128 + N, as a shell does.
        const byStatus = exitCode !== null && exitCode > 128 && exitCode < 128 + 65 ? signalName(exitCode - 128) : null;
        const sig = exitSignal ?? byStatus;
        const code = sig === null ? exitCode : null;
        resolve({
          reason: reasonOf(killedFor, code, sig, command.limits, stderrTail, saidOutOfMemory),
          code,
          signal: sig,
          durationMs,
        });
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
    kill: () => kill('killed'),
  };
}

/** A failed allocation, as runtimes and libc report it. */
const OUT_OF_MEMORY = /out of memory|cannot allocate memory|MemoryError|bad_alloc|Allocation failed|ENOMEM/i;

function reasonOf(
  killedFor: 'timeout' | 'aborted' | 'killed' | undefined,
  code: number | null,
  sig: string | null,
  limits: ProcessLimits | undefined,
  stderrTail: string,
  saidOutOfMemory: boolean,
): ExitReason {
  if (killedFor === 'timeout') return { kind: 'timeout' };
  if (killedFor === 'aborted') return { kind: 'aborted' };
  if (killedFor === 'killed') return { kind: 'signal', signal: 'SIGKILL' };
  if (limits?.cpuMs !== undefined && (sig === 'SIGXCPU' || (sig === 'SIGKILL' && /\bSIGXCPU\b/.test(stderrTail))))
    return { kind: 'cpu', signal: sig };
  if (limits?.memoryMb !== undefined && (code !== 0 || sig !== null) && saidOutOfMemory)
    return { kind: 'memory', signal: sig, code };
  if (sig !== null) return { kind: 'signal', signal: sig };
  return { kind: 'exit', code: code ?? 0 };
}

/** The programs between bwrap and the command: the egress bridge, then the limits. */
function wrapper(command: IsolatedCommand, socat: string | undefined, runAs: { uid: number }): string[] {
  const prefix: string[] = [];
  if (command.egress && socat !== undefined) {
    // socat listens on the sandbox's own loopback and hands each connection to the proxy's
    // socket, without Nagle (a response written in parts would otherwise wait on the
    // client's delayed ACK, 40 ms for each request on a kept-alive connection). The command starts once the port listens (/proc/net/tcp of this network
    // namespace); if socat dies or the port does not come up within a bounded number of
    // tries, nothing runs and the host gets a SandboxSetupError.
    const port = SANDBOX_PROXY.port.toString(16).toUpperCase().padStart(4, '0');
    const script = [
      `${socat} TCP-LISTEN:${SANDBOX_PROXY.port},bind=${SANDBOX_PROXY.host},reuseaddr,fork,nodelay UNIX-CONNECT:${PROXY_TARGET}/proxy.sock </dev/null >/dev/null 2>&1 ${READY_FD}>&- &`,
      'bridge=$!',
      // Shell built-ins only: a wait that starts no process of its own.
      'listening() {',
      '  while read -r _ local _ state _; do',
      `    [ "$local" = 0100007F:${port} ] && [ "$state" = 0A ] && return 0`,
      '  done </proc/net/tcp',
      '  return 1',
      '}',
      'tries=0',
      'until listening; do',
      '  state=',
      '  read -r _ _ state _ </proc/$bridge/stat 2>/dev/null',
      '  tries=$((tries + 1))',
      '  if [ "$tries" -gt 2000 ] || [ -z "$state" ] || [ "$state" = Z ]; then',
      `    echo 'sandbox: the egress bridge (socat) did not listen on ${SANDBOX_PROXY.host}:${SANDBOX_PROXY.port}' >&2`,
      '    exit 125',
      '  fi',
      // socat listens within a few milliseconds: the first tries do not sleep (a `sleep` is a process).
      '  [ "$tries" -gt 50 ] && sleep 0.005',
      'done',
      `printf up >&${READY_FD}`,
      `exec ${READY_FD}>&-`,
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

/** /dev/shm's size: `memoryMb`, or 64 MiB without it. */
function shmBytes(limits: ProcessLimits | undefined): number {
  return Math.max(1, Math.floor(limits?.memoryMb ?? 64)) * 1024 * 1024;
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
      // The folder's owner is the process's effective account: only those are read further.
      if (statSync(`/proc/${name}`).uid !== uid) continue;
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
    args.push('--ro-bind-data', String(INPUT_FD + data.length), target);
    data.push(content);
  }
  return args;
}

let devNullFd: number | undefined;

function devNull(): number {
  devNullFd ??= openSync('/dev/null', 'r');
  return devNullFd;
}

let inheritable: number[] | undefined;

/**
 * Descriptors of this process above stderr without close-on-exec (O_CLOEXEC, 02000000 octal),
 * read once: they are the ones this process inherited at its start (Node opens its own
 * close-on-exec), and re-reading /proc on every spawn would cost each sandbox's start.
 */
function inheritableDescriptors(): number[] {
  inheritable ??= readInheritableDescriptors();
  return inheritable;
}

function readInheritableDescriptors(): number[] {
  const fds: number[] = [];
  for (const name of readdirSafe('/proc/self/fd')) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    try {
      const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & 0o2000000) === 0) fds.push(fd);
    } catch {
      // Closed meanwhile.
    }
  }
  return fds.sort((a, b) => a - b);
}

function ownerOf(path: string): number | undefined {
  try {
    return statSync(path).uid;
  } catch {
    return undefined;
  }
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

async function untilEmpty(ns: string, init: number | undefined, timeoutMs: number): Promise<void> {
  // The kernel kills and reaps every other process of a PID namespace while its init exits,
  // before the init becomes a zombie: an init that is a zombie, gone, or whose pid now
  // belongs to another namespace means the namespace is empty. Only an init that is still
  // alive sends us to /proc. Past the deadline, whatever is left is killed by pid (each
  // checked to be of `ns`).
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (init !== undefined && !isLiveIn(init, ns)) return;
    if (init === undefined && processesInNamespace(ns).length === 0) return;
    if (Date.now() >= deadline + timeoutMs) return;
    if (Date.now() >= deadline) for (const pid of processesInNamespace(ns)) signal(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Whether `pid` is a live (not zombie) process of PID namespace `ns`. */
function isLiveIn(pid: number, ns: string): boolean {
  if (pidNamespaceOf(pid) !== ns) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
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
