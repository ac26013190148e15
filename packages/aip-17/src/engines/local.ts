import { readFileSync, realpathSync, statSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { extractTarGz } from '@agentproto/aip-26';
import {
  type IsolatedResult,
  type Mount,
  SANDBOX_PROXY,
  checkSandbox,
  defaultRunAs,
  runIsolated,
  startEgressProxy,
} from '@agentproto/sandbox';
import type { RunnerLimits } from '../define/types.js';
import type { Enforcement } from './types.js';

/** Bounds and places of a run on this machine (the isolated subprocess engine and `bubblewrapDriver`). */
export interface LocalRunOptions {
  /** Where each run's folder is made, and removed after the run. Default: the system temp folder. */
  workDir?: string;
  /** Most uncompressed bytes extracted from a bundle. Default 256 MiB. */
  maxBytes?: number;
  /** Most files extracted from a bundle. Default 100,000. */
  maxFiles?: number;
  /** Most bytes kept of each of stdout and stderr. Default 8 MiB. */
  maxOutputBytes?: number;
  /** Processes a run may have at once (RLIMIT_NPROC of the sandbox's account). Default 256. */
  maxProcesses?: number;
}

/** Where the bundle is inside the sandbox: the working folder of the run. */
export const BUNDLE_ROOT = '/bundle';

/** A run's host folder: `bundle/` (mounted read-only at /bundle) and `scratch/` (the writable /tmp). */
export interface RunFolder {
  /** The run's own folder under `workDir`. */
  readonly work: string;
  readonly bundleDir: string;
  readonly scratchDir: string;
  readonly runAs: { uid: number; gid: number };
}

/** What the local engines enforce: the whole namespace at the timeout, rlimits per process for memory and CPU. */
export function localEnforcement(limits: RunnerLimits): Enforcement {
  return { memory_mb: 'per-process', timeout_ms: 'enforced', cpu_ms: limits.cpu_ms > 0 ? 'per-process' : 'uncapped' };
}

/**
 * Checks that this machine isolates (throws `SandboxUnavailableError` otherwise, before
 * anything is made), then makes the run's folder. As root the sandbox runs as nobody: the
 * folder is then traversable but not listable by others (0711), and the scratch folder is
 * nobody's own (0700), so it is the one place the run can write.
 */
export async function makeRunFolder(options: LocalRunOptions): Promise<RunFolder> {
  const runAs = defaultRunAs();
  checkSandbox({ runAs });
  const work = await mkdtemp(join(options.workDir ?? tmpdir(), 'agentproto-run-'));
  try {
    await chmod(work, 0o711);
    const scratchDir = join(work, 'scratch');
    await mkdir(scratchDir, { mode: 0o700 });
    if (runAs.uid !== process.getuid?.() || runAs.gid !== process.getgid?.())
      await chown(scratchDir, runAs.uid, runAs.gid);
    return { work, bundleDir: join(work, 'bundle'), scratchDir, runAs };
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw error;
  }
}

/** Extracts the bundle under the archive rules (no link out, no `..`, bounded); returns its files. */
export async function extractBundle(folder: RunFolder, bundle: Buffer, options: LocalRunOptions): Promise<string[]> {
  const { files } = await extractTarGz(bundle, folder.bundleDir, {
    maxBytes: options.maxBytes ?? 256 * 1024 * 1024,
    maxFiles: options.maxFiles ?? 100_000,
  });
  return files;
}

export function removeRunFolder(folder: RunFolder): Promise<void> {
  return rm(folder.work, { recursive: true, force: true });
}

export interface FolderCommand {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  limits: RunnerLimits;
  timeoutMs: number;
  network?: { egress: readonly string[] } | undefined;
  stdin?: string | Uint8Array | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Runs `argv` in the sandbox of `folder`: the bundle read-only at /bundle (the working
 * folder), scratch writable at /tmp, the system folders and the runtime read-only, nothing
 * else of the host's. With `network`, an egress proxy granting exactly those hosts lives for
 * this run, and the env gets HTTP_PROXY/HTTPS_PROXY (and their lower-case twins) pointing at
 * it: the only addition to the host's env.
 */
export async function runInFolder(
  folder: RunFolder,
  command: FolderCommand,
  options: LocalRunOptions,
): Promise<IsolatedResult> {
  const egress = command.network
    ? await startEgressProxy({ allow: command.network.egress, owner: folder.runAs })
    : undefined;
  try {
    const env = egress
      ? {
          ...command.env,
          HTTP_PROXY: SANDBOX_PROXY.url,
          HTTPS_PROXY: SANDBOX_PROXY.url,
          http_proxy: SANDBOX_PROXY.url,
          https_proxy: SANDBOX_PROXY.url,
        }
      : { ...command.env };
    const mounts: Mount[] = [
      { source: folder.bundleDir, target: BUNDLE_ROOT },
      { source: folder.scratchDir, target: '/tmp', writable: true },
      ...runtimeMounts(command.argv[0] ?? '', command.env.PATH),
    ];
    return await runIsolated({
      argv: command.argv,
      env,
      cwd: BUNDLE_ROOT,
      mounts,
      ...(egress ? { egress } : {}),
      limits: {
        memoryMb: command.limits.memory_mb,
        ...(command.limits.cpu_ms > 0 ? { cpuMs: command.limits.cpu_ms } : {}),
        maxProcesses: options.maxProcesses ?? 256,
      },
      runAs: folder.runAs,
      timeoutMs: command.timeoutMs,
      ...(command.signal ? { signal: command.signal } : {}),
      ...(command.stdin !== undefined ? { stdin: command.stdin } : {}),
      maxOutputBytes: options.maxOutputBytes ?? 8 * 1024 * 1024,
    });
  } finally {
    await egress?.close();
  }
}

/** Folders the sandbox's `system` view already holds. */
const SYSTEM = /^\/(usr|bin|sbin|lib|lib32|lib64|libx32)\//;

/**
 * The runtime a command names, when it lives outside the system folders (node from nvm,
 * /opt/python): its install folder (`<prefix>` of `<prefix>/bin/node`), read-only at the same
 * path. Only for a bare name found on the host's PATH (the host chose those folders): a path
 * the manifest names (`["/srv/app/bin/tool"]`) gets nothing, so a manifest cannot have a
 * folder of the host's shown to it by naming a program there. Never a folder that is, or
 * holds, an account's home, nor a top-level folder: then only the program file itself.
 */
function runtimeMounts(program: string, envPath: string | undefined): Mount[] {
  if (program.includes('/')) return [];
  const found = lookUp(program, envPath ?? '/usr/bin:/bin');
  if (found === undefined) return [];
  let real: string;
  try {
    real = realpathSync(found);
  } catch {
    return [];
  }
  const mounts = new Map<string, Mount>();
  const homes = accountHomes();
  for (const path of new Set([found, real])) {
    if (SYSTEM.test(path)) continue;
    const bin = dirname(path);
    const prefix = basename(bin) === 'bin' ? dirname(bin) : bin;
    const shallow = prefix.split('/').filter(Boolean).length < 2;
    const holdsHome = homes.some((home) => home === prefix || home.startsWith(`${prefix}/`));
    const source = shallow || holdsHome ? path : prefix;
    mounts.set(source, { source, target: source });
  }
  return [...mounts.values()];
}

/** Every account's home folder (/etc/passwd) and this process's. */
function accountHomes(): string[] {
  const homes = new Set([homedir()]);
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const home = line.split(':')[5];
      if (home !== undefined && isAbsolute(home) && home !== '/') homes.add(home.replace(/\/+$/, ''));
    }
  } catch {
    // No passwd file: this process's home only.
  }
  return [...homes];
}

/** `program` looked up in `path` as execvp would; a path with a slash as it is (when absolute). */
export function lookUp(program: string, path: string): string | undefined {
  if (program.includes('/')) return isAbsolute(program) ? program : undefined;
  for (const folder of path.split(delimiter)) {
    if (!isAbsolute(folder)) continue;
    const candidate = join(folder, program);
    try {
      const stat = statSync(candidate);
      if (stat.isFile() && (stat.mode & 0o111) !== 0) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
