import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { childProcess } from '../node-builtin.js';

/**
 * How a run makes sure nothing the bundle started outlives it. A process group is not
 * enough: `setsid` leaves it, and a double fork re-parents the grandchild to init.
 *
 * - `pid-namespace` (Linux, util-linux `unshare`, user namespaces allowed): the bundle runs
 *   as init of a fresh PID namespace (`unshare --map-current-user --pid --fork
 *   --kill-child`). Every process it starts, however it forks or whatever session it
 *   makes, is inside; when that init exits or is killed, the kernel kills every other
 *   process of the namespace, and `unshare` returns only once they are all reaped. Nothing
 *   inside can leave a PID namespace.
 * - `process-tree` (elsewhere): descendants are found by walking /proc (parent ids, and an
 *   environment token in /proc/<pid>/environ), polled while the bundle runs; at the end each
 *   is stopped (SIGSTOP, so it cannot fork again) and then killed, until a walk finds none.
 *   Best effort: a process that double-forks and clears its environment between two polls
 *   escapes.
 */

let namespaceWorks: boolean | undefined;

/** The argv prefix that runs a command as init of its own PID namespace, or undefined when this machine cannot. */
export function pidNamespacePrefix(): string[] | undefined {
  if (process.platform !== 'linux') return undefined;
  const unshare = findProgram('unshare', process.env.PATH);
  if (unshare === undefined) return undefined;
  const prefix = [unshare, '--map-current-user', '--pid', '--fork', '--kill-child', '--'];
  // Probed once per process: user namespaces may be off (sysctl, seccomp, a container).
  namespaceWorks ??=
    childProcess().spawnSync(prefix[0] as string, [...prefix.slice(1), 'true'], { stdio: 'ignore', timeout: 5000 })
      .status === 0;
  return namespaceWorks ? prefix : undefined;
}

/** `name` looked up in `path` as execvp would; absolute or relative-with-slash names as they are. */
export function findProgram(name: string, path: string | undefined): string | undefined {
  if (name.includes('/')) return name;
  for (const folder of (path ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (folder === '' || !isAbsolute(folder)) continue;
    const candidate = join(folder, name);
    try {
      const stat = statSync(candidate);
      if (stat.isFile() && (stat.mode & 0o111) !== 0) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

interface ProcInfo {
  ppid: number;
  /** Start time in clock ticks since boot: with the pid, the process's identity (pids are reused). */
  start: string;
  state: string;
}

/** /proc/<pid>/stat: the fields after the command name, which may hold spaces and parentheses. */
function readStat(pid: number): ProcInfo | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] as string, ppid: Number(fields[1]), start: fields[19] as string };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

function holdsToken(pid: number, token: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(token);
  } catch {
    return false;
  }
}

/** The PID namespace a process is in (`pid:[4026532xyz]`), or undefined once it is gone. */
export function pidNamespaceOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/** Live processes (not zombies) in the PID namespace `ns`. */
export function processesInNamespace(ns: string): number[] {
  return allPids().filter((pid) => pidNamespaceOf(pid) === ns && !isGone(pid));
}

function isGone(pid: number, start?: string): boolean {
  const info = readStat(pid);
  return (
    info === undefined || info.state === 'Z' || info.state === 'X' || (start !== undefined && info.start !== start)
  );
}

/**
 * The processes a run started, without a PID namespace: the root, every process whose
 * parent is one of them, and every process carrying the run's environment token. `scan`
 * runs while the bundle runs (a process whose parent exits is re-parented to init, and is
 * then found only because it was seen before, or by its token); `killAll` ends them.
 */
export class ProcessTree {
  private readonly known = new Map<number, string>();

  constructor(
    root: number,
    private readonly token: string,
  ) {
    const info = readStat(root);
    if (info) this.known.set(root, info.start);
  }

  /** Adds every descendant and token holder alive now, until a pass finds nothing new. */
  scan(): void {
    for (let pass = 0; pass < 64; pass += 1) {
      let added = false;
      for (const pid of allPids()) {
        if (this.known.has(pid)) continue;
        const info = readStat(pid);
        if (!info || info.state === 'Z') continue;
        const parentStart = this.known.get(info.ppid);
        const child = parentStart !== undefined && !isGone(info.ppid, parentStart);
        if (child || holdsToken(pid, this.token)) {
          this.known.set(pid, info.start);
          added = true;
        }
      }
      if (!added) return;
    }
  }

  /**
   * Stops every known process (SIGSTOP: a stopped process cannot fork), looks again for
   * children made meanwhile, and repeats until a pass finds nothing new; then SIGKILLs them
   * all and waits (bounded) until none is alive. A pid whose start time changed is another
   * process now, and is left alone.
   */
  async killAll(timeoutMs = 5000): Promise<void> {
    for (let round = 0; round < 64; round += 1) {
      const before = this.known.size;
      for (const [pid, start] of this.known) if (!isGone(pid, start)) signal(pid, 'SIGSTOP');
      this.scan();
      if (this.known.size === before) break;
    }
    for (const [pid, start] of this.known) if (!isGone(pid, start)) signal(pid, 'SIGKILL');
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && [...this.known].some(([pid, start]) => !isGone(pid, start))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}
