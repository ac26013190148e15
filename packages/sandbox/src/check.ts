import { spawnSync } from 'node:child_process';
import { lstatSync, readlinkSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { SandboxUnavailableError } from './errors.js';

/** What a check found: the programs isolation runs with. */
export interface SandboxSupport {
  /** Absolute path of `bwrap`. */
  bwrap: string;
  /** bwrap's version, e.g. `0.8.0`. */
  version: string;
  /** Absolute path of `socat`, when installed (needed only for granted hosts). */
  socat: string | undefined;
}

/** Where and as whom `checkSandbox` looks. */
export interface CheckSandboxOptions {
  /** Where programs are looked for. Default: this process's PATH, then /usr/bin and /bin. */
  path?: string;
  /** Check as this account (root hosts run sandboxes as an unprivileged one). Default: this process's. */
  runAs?: { uid: number; gid: number };
}

const checked = new Map<string, SandboxSupport | SandboxUnavailableError>();

/**
 * Whether this machine can isolate a process: Linux, bubblewrap installed, and the kernel
 * lets bubblewrap make user, PID, network, mount, IPC and UTS namespaces. Runs one tiny
 * sandbox (`true`) the first time per PATH and account, then answers from memory.
 *
 * @example
 * ```ts
 * import { checkSandbox } from '@agentproto/sandbox';
 *
 * const { bwrap, version } = checkSandbox(); // throws SandboxUnavailableError when isolation cannot be had
 * ```
 *
 * @throws {SandboxUnavailableError} `SANDBOX_UNAVAILABLE`: not Linux, no bwrap, or the kernel refuses namespaces.
 */
export function checkSandbox(options: CheckSandboxOptions = {}): SandboxSupport {
  const path = options.path ?? `${process.env.PATH ?? ''}${delimiter}/usr/bin${delimiter}/bin`;
  const key = `${path}\0${options.runAs?.uid ?? ''}`;
  let known = checked.get(key);
  if (known === undefined) {
    known = probe(path, options.runAs);
    checked.set(key, known);
  }
  if (known instanceof SandboxUnavailableError) throw known;
  return known;
}

function probe(
  path: string,
  runAs: { uid: number; gid: number } | undefined,
): SandboxSupport | SandboxUnavailableError {
  if (process.platform !== 'linux') return new SandboxUnavailableError('not-linux', process.platform);
  const bwrap = findProgram('bwrap', path);
  if (bwrap === undefined) return new SandboxUnavailableError('bwrap-missing', 'no bwrap in PATH');
  const version = spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const result = spawnSync(bwrap, [...probeArgs(), '--', '/usr/bin/true'], {
    encoding: 'utf8',
    timeout: 10_000,
    env: {},
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  });
  if (result.status !== 0) {
    const said = `${result.stderr ?? ''}`.trim() || (result.error?.message ?? `exit ${result.status}`);
    return new SandboxUnavailableError('namespaces-refused', said);
  }
  return {
    bwrap,
    version: `${version.stdout ?? ''}`.trim().replace(/^bubblewrap\s+/, ''),
    socat: findProgram('socat', path),
  };
}

/** The smallest sandbox that exercises every namespace a real one makes. */
function probeArgs(): string[] {
  return [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
    ...usrMergeLinks(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
  ];
}

/** /bin, /lib, /lib64, /sbin as this machine has them: links into /usr (merged /usr), or folders bound read-only. */
export function usrMergeLinks(): string[] {
  const args: string[] = [];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const target = linkTarget(`/${name}`);
    if (target !== undefined) args.push('--symlink', target, `/${name}`);
    else if (isFolder(`/${name}`)) args.push('--ro-bind', `/${name}`, `/${name}`);
  }
  return args;
}

function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `name` looked up in `path` as execvp would; a name with a slash as it is. */
function findProgram(name: string, path: string): string | undefined {
  if (name.includes('/')) return name;
  for (const folder of path.split(delimiter)) {
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
