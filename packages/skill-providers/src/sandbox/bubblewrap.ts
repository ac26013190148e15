import { realpathSync, statSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { defaultCacheRoot, makePrivateDir, removePrivateDir, sweepPrivateDirs } from '@agentproto/content-cache';
import { localCommandHost } from '@agentproto/git';
import {
  type EgressAttempt,
  type EgressProxy,
  type IsolatedResult,
  type Mount,
  SANDBOX_PROXY,
  SandboxSetupError,
  SandboxSpecError,
  SandboxUnavailableError,
  checkSandbox,
  runIsolated,
  startEgressProxy,
} from '@agentproto/sandbox';
import { SkillError } from '../errors-base.js';
import { BubblewrapSession, sessionCanRun } from './bubblewrap-session.js';
import type { RunOptions, RunResult, Sandbox, SandboxCapabilities } from './sandbox.js';

/** Options of bubblewrapSandbox(): where private folders go and programs are found, and who hears of refusals. */
export interface BubblewrapSandboxOptions {
  /**
   * The root of private folders, made 0700 if missing (`private/` under the default store
   * root by default), as for localSandbox: each folder is seen inside the sandbox at its own
   * path, and nothing else under this root is.
   */
  privateRoot?: string;
  /**
   * Where bwrap and socat are looked for, and git and ssh (which must resolve into the
   * system folders the sandbox shows: /usr, /bin, /lib…). Default: this process's PATH, then
   * the standard folders.
   */
  path?: string;
  /** `{ ssh: false }` makes an HTTPS-only sandbox. SSH is otherwise there when `ssh` is installed. */
  capabilities?: { ssh?: boolean };
  /** Called for each connection the network boundary refused, after it is recorded in `refusedEgress`. */
  onEgressRefused?(attempt: EgressAttempt): void;
}

/** bubblewrapSandbox(): a Sandbox, plus what its network boundary saw and a way to stop it. */
export interface BubblewrapSandbox extends Sandbox {
  /** `bubblewrap`, in messages (`sandbox "bubblewrap" …`). */
  readonly name: 'bubblewrap';
  /** Grants exactly `hosts` (`host` or `host:port`) to the entry whose private folder waits for its grant; see the README's "Egress". */
  allowEgress(hosts: readonly string[], signal: AbortSignal): Promise<void>;
  /** Removes the private folders killed processes left under the private root; returns how many. */
  sweepPrivateDirs(): Promise<number>;
  /** Connections commands asked for that were not granted, in order (`host`, `port`): the first 1000. */
  readonly refusedEgress: readonly EgressAttempt[];
  /** Stops the egress proxy, if one runs. The sandbox can be used again: a later grant starts another. */
  close(): Promise<void>;
}

/** What the sandbox would need and this machine lacks. */
export type IsolationMissing = 'linux' | 'bubblewrap' | 'namespaces' | 'socat' | 'git';

/**
 * bubblewrapSandbox() cannot isolate on this machine. Thrown when the sandbox is made,
 * never replaced by running without isolation: a host that accepts running git in its own
 * account must choose localSandbox() itself.
 */
export class SandboxIsolationUnavailableError extends SkillError {
  declare readonly code: 'SKILL_SANDBOX_UNAVAILABLE';
  constructor(
    /** The sandbox's name (`bubblewrap`). */
    readonly sandbox: string,
    /** The part that is missing: a program (`bubblewrap`, `socat`, `git`), `namespaces` or `linux`. */
    readonly missing: IsolationMissing,
    /** Where it was looked for, or what bubblewrap said. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SKILL_SANDBOX_UNAVAILABLE',
      `sandbox "${sandbox}" cannot isolate here: ${MISSING[missing]} (${detail})`,
      options,
    );
  }
}

/**
 * A command failed after the sandbox's network boundary refused it a connection: the
 * provider's egress hosts do not include where it went. Rejected by `run` instead of the
 * command's own failure, which would read as something else (git reports a proxy's 403 on
 * plain HTTP as a refused credential). Holds no output of the command.
 */
export class SandboxEgressRefusedError extends SkillError {
  declare readonly code: 'SKILL_EGRESS_REFUSED';
  constructor(
    /** The sandbox's name (`bubblewrap`). */
    readonly sandbox: string,
    /** The connections refused while the command ran, `host` and `port`. */
    readonly refused: readonly EgressAttempt[],
    /** The hosts the boundary granted then. */
    readonly granted: readonly string[],
  ) {
    const where = refused.map(({ host, port }) => `${host}:${port}`).join(', ');
    super(
      'SKILL_EGRESS_REFUSED',
      `sandbox "${sandbox}" could not connect to ${where}: its network boundary grants ${granted.length === 0 ? 'no host' : `only ${granted.join(', ')}`} (the provider's egress hosts)`,
    );
  }
}

const MISSING: Record<IsolationMissing, string> = {
  linux: 'it needs Linux namespaces',
  bubblewrap: 'bubblewrap (bwrap) is not installed',
  namespaces: 'bubblewrap cannot create namespaces',
  socat: 'socat is not installed (the network boundary needs it)',
  git: 'no git program in the system folders it shows (the in-process engine would run outside the boundary)',
};

const BY_REASON: Record<SandboxUnavailableError['reason'], IsolationMissing> = {
  'not-linux': 'linux',
  'bwrap-missing': 'bubblewrap',
  'namespaces-refused': 'namespaces',
  'socat-missing': 'socat',
};

/** Where the system-git engine looks for programs when it runs in a sandbox (its STANDARD_PATH). */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Host folders the sandbox shows read-only as its system; a program must resolve into one of them. */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Never bound writable as a working folder: the system, and what the kernel and services own. */
const NEVER_WRITABLE = [...SYSTEM_FOLDERS, '/etc', '/proc', '/dev', '/sys', '/run', '/boot', '/var/run'];

/**
 * Skill acquisition inside bubblewrap: every command (git, ssh, git's HTTP helper) runs in
 * its own user, PID, mount and network namespaces, as this process's account, seeing the
 * read-only system folders, the private folder its paths name (the credentials and the
 * gitdir, at their own path) and nothing of the host's home or config. It has no network
 * at all unless `allowEgress` granted hosts: then its only way out is a host-side proxy
 * that connects to exactly those (HTTPS through git's `http.proxy`, SSH through a
 * ProxyCommand), and refuses everything else. An entry's commands run one after another
 * in one sandbox of the entry's own, ended with its private folder (see the README's "One
 * sandbox per entry").
 *
 * Needs bubblewrap, socat and git (ssh for SSH sources) in the system folders. There is no
 * in-process engine: the ref listing runs in the sandbox too.
 *
 * @example
 * ```ts
 * import { bubblewrapSandbox, prepareSkills } from '@agentproto/skill-providers';
 *
 * const sandbox = bubblewrapSandbox({ privateRoot: cache.privateRoot });
 * try {
 *   await prepareSkills(declaration, { cache, sandbox });
 * } finally {
 *   await sandbox.close();
 * }
 * ```
 *
 * @throws {SandboxIsolationUnavailableError} `SKILL_SANDBOX_UNAVAILABLE`: no bubblewrap, no namespaces, no socat or no git.
 */
export function bubblewrapSandbox(options: BubblewrapSandboxOptions = {}): BubblewrapSandbox {
  const name = 'bubblewrap';
  const runAs = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const path = options.path ?? `${process.env.PATH ?? ''}:${SYSTEM_PATH}`;
  let socat: string;
  try {
    const support = checkSandbox({ runAs, path });
    if (support.socat === undefined) throw new SandboxUnavailableError('socat-missing', 'no socat in PATH');
    socat = support.socat;
  } catch (error) {
    if (error instanceof SandboxUnavailableError)
      throw new SandboxIsolationUnavailableError(name, BY_REASON[error.reason], error.detail, { cause: error });
    throw error;
  }
  if (systemProgram('git', path) === undefined)
    throw new SandboxIsolationUnavailableError(name, 'git', `looked in ${path}`);
  const capabilities: SandboxCapabilities = {
    https: true,
    ssh: (options.capabilities?.ssh ?? true) && systemProgram('ssh', path) !== undefined,
    git: true,
    inProcess: false,
  };
  const privateRoot = normalize(options.privateRoot ?? join(defaultCacheRoot(), 'private'));
  const host = localCommandHost();
  const egress = egressBoundary(runAs, options.onEgressRefused);
  /** The session of each entry (by its private folder), started at its grant or its first command. */
  const sessions = new Map<string, Promise<BubblewrapSession | undefined>>();
  const sessionOf = (dir: string): Promise<BubblewrapSession | undefined> => {
    const current = sessions.get(dir);
    if (current !== undefined) return current;
    const started = (async () => {
      const proxy = await egress.proxy();
      // A session that cannot start leaves its commands to run on their own (and fail there
      // with bwrap's own message, if it is the sandbox that cannot be set up).
      return BubblewrapSession.start({ privateRoot, workDir: dir, egress: proxy, runAs }).catch(() => undefined);
    })();
    sessions.set(dir, started);
    return started;
  };
  /** Sessions being closed after an abort killed them, awaited before any folder goes. */
  const ending = new Set<Promise<void>>();
  const endSession = async (dir: string) => {
    const session = sessions.get(dir);
    sessions.delete(dir);
    await Promise.all([(async () => (await session)?.close())(), ...ending]);
    ending.clear();
  };

  /**
   * The command through its entry's session, when it can go there: it names exactly one
   * private folder of this sandbox (the entry's, working in it or at /), and asks for the
   * way out only if the session has it. Undefined when it must run on its own.
   */
  const inSession = async (
    argv: readonly string[],
    env: Record<string, string>,
    run: RunOptions,
    mounts: readonly Mount[],
    proxy: EgressProxy | undefined,
  ): Promise<RunResult | undefined> => {
    const [only] = mounts;
    if (mounts.length !== 1 || only === undefined || !egress.privateDirs().has(only.source)) return undefined;
    const command = { argv, env, cwd: run.cwd, stdin: run.stdin };
    if (!sessionCanRun(command)) return undefined;
    const dir = only.source;
    const current = sessionOf(dir);
    let session = await current;
    if (session !== undefined && !session.alive) {
      // Killed under an aborted command: the entry's next command starts the next session.
      if (sessions.get(dir) === current) {
        sessions.delete(dir);
        ending.add(session.close().catch(() => undefined));
      }
      session = await sessionOf(dir);
    }
    if (session === undefined || (proxy !== undefined && session.egress !== proxy)) return undefined;
    const outcome = await session.run(command, run.signal);
    if (outcome.kind === 'gone') return undefined;
    if (outcome.kind === 'not-started')
      throw new SandboxSetupError(
        argv[0] ?? '',
        outcome.what === 'cwd' ? `no working folder ${run.cwd}` : 'no such program',
      );
    return { code: outcome.code, stdout: outcome.stdout, stderr: outcome.stderr };
  };

  /** The command in a sandbox of its own. */
  const alone = async (
    argv: readonly string[],
    env: Record<string, string>,
    run: RunOptions,
    mounts: Mount[],
    proxy: EgressProxy | undefined,
  ): Promise<RunResult> => {
    const { signal } = run;
    const result: IsolatedResult = await runIsolated({
      argv,
      env,
      cwd: run.cwd ?? '/',
      mounts,
      runAs,
      ...(proxy === undefined ? {} : { egress: proxy }),
      ...(signal === undefined ? {} : { signal }),
      ...(run.stdin === undefined ? {} : { stdin: run.stdin }),
      // git's object reader gets whole blobs on stdout; the fetch caps bound them, as in localSandbox.
      maxOutputBytes: Number.MAX_SAFE_INTEGER,
    });
    if (result.reason.kind === 'aborted' || signal?.aborted) throw signal?.reason ?? new Error('aborted');
    const code = result.code ?? 128 + (constants.signals[result.signal as keyof typeof constants.signals] ?? 0);
    return { code, stdout: result.stdout, stderr: result.stderr };
  };

  return {
    name,
    capabilities,
    async run(argv: readonly string[], run: RunOptions): Promise<RunResult> {
      const { signal } = run;
      if (signal?.aborted) throw signal.reason;
      const mounts = mountsFor(argv, run, egress.privateDirs(), privateRoot);
      // Only a command that names a remote gets the way out: one that runs on its own for a
      // local git command (cat-file, rev-list on the private gitdir) has no network at all.
      const proxy = namesRemote(argv, run.env) ? await egress.proxy() : undefined;
      const env = proxy === undefined ? { ...run.env } : throughProxy(run.env, socat);
      const refusedNow: EgressAttempt[] = [];
      const hear = (attempt: EgressAttempt) => {
        if (refusedNow.length < 100) refusedNow.push(attempt);
      };
      egress.listeners.add(hear);
      let result: { code: number; stdout: Buffer; stderr: Buffer } | undefined;
      try {
        result = await inSession(argv, env, run, mounts, proxy);
        result ??= await alone(argv, env, run, mounts, proxy);
      } catch (error) {
        // SandboxSetupError: bwrap could not start the program (or set the sandbox up); it never ran.
        if (signal?.aborted) throw signal.reason;
        throw error;
      } finally {
        egress.listeners.delete(hear);
      }
      // A failure after the boundary refused this command a host it names: say so. (Another
      // command's refusal at the same moment is told apart by the host it names.)
      const refused = refusedNow.filter(({ host }) => namesHost(argv, run.env, host));
      if (result.code !== 0 && proxy !== undefined && refused.length > 0)
        throw new SandboxEgressRefusedError(name, refused, egress.granted());
      return result;
    },
    writeFile: host.writeFile,
    async makePrivateDir() {
      const dir = await makePrivateDir(privateRoot);
      egress.made(dir);
      return dir;
    },
    async removePrivateDir(path) {
      try {
        // The entry's session ends first: nothing of it runs while its folder goes.
        await endSession(path).catch(() => undefined);
        await removePrivateDir(path);
      } finally {
        // The entry is over either way: its grant ends (and with the last one, the proxy).
        await egress.removed(path);
      }
    },
    sweepPrivateDirs: () => sweepPrivateDirs(privateRoot),
    async allowEgress(hosts, signal) {
      if (signal.aborted) throw signal.reason;
      const dir = await egress.grant(hosts);
      // The entry's session starts now, with the way out, while the core gets ready for its first command.
      if (dir !== undefined && !sessions.has(dir)) void sessionOf(dir);
    },
    get refusedEgress() {
      return egress.refused;
    },
    async close() {
      await Promise.all([...sessions.keys()].map((dir) => endSession(dir).catch(() => undefined)));
      await egress.close();
    },
  };
}

/**
 * One egress proxy for the sandbox, running only while hosts are granted. A grant belongs
 * to the oldest private folder still waiting for one: the core calls allowEgress right after
 * its makePrivateDir resolves, for that entry, and entries whose folders are made at once
 * resume in the order the folders were made. It ends with that folder's removal; entries prepared at
 * once share the proxy, which grants the union of their hosts. A grant with no private
 * folder waiting holds until close(). With nothing granted the proxy is closed, so it never
 * keeps the host's process alive after a preparation.
 */
function egressBoundary(
  runAs: { uid: number; gid: number },
  onRefused: ((attempt: EgressAttempt) => void) | undefined,
) {
  const refused: EgressAttempt[] = [];
  const listeners = new Set<(attempt: EgressAttempt) => void>();
  const live = new Set<string>();
  const waiting: string[] = [];
  const byDir = new Map<string, readonly string[]>();
  let standing: readonly string[] = [];
  let running: Promise<EgressProxy> | undefined;
  const hosts = () => [...new Set([...standing, ...[...byDir.values()].flat()])];
  const stop = async () => {
    const proxy = running;
    running = undefined;
    if (proxy !== undefined)
      await proxy.then(
        (started) => started.close(),
        () => undefined,
      );
  };
  const update = async () => {
    const all = hosts();
    if (all.length === 0) return stop();
    // The proxy's folder belongs to the account commands run as (this one), as the private folders do.
    running ??= startEgressProxy({
      owner: runAs,
      onRefused(attempt) {
        // The first 1000 are kept, as the proxy keeps them: a command that keeps asking cannot grow memory.
        if (refused.length < 1000) refused.push(attempt);
        for (const listener of listeners) listener(attempt);
        onRefused?.(attempt);
      },
    }).catch((error: unknown) => {
      // A proxy that did not start is not kept: the next grant tries again.
      running = undefined;
      throw error;
    });
    (await running).grant(all);
  };
  return {
    refused,
    /** Hear each refusal while a command runs, to tell its own apart. */
    listeners,
    privateDirs: () => live,
    granted: hosts,
    made(dir: string) {
      live.add(dir);
      waiting.push(dir);
    },
    async removed(dir: string) {
      live.delete(dir);
      if (waiting.includes(dir)) waiting.splice(waiting.indexOf(dir), 1);
      if (byDir.delete(dir)) await update();
    },
    /** Grants `granted` to the oldest private folder waiting for a grant; resolves with that folder, if any. */
    async grant(granted: readonly string[]): Promise<string | undefined> {
      const dir = waiting.shift();
      const before = standing;
      if (dir === undefined) standing = [...new Set([...standing, ...granted])];
      else byDir.set(dir, [...granted]);
      try {
        await update();
      } catch (error) {
        // A host that is not `host` or `host:port` (EgressHostError): nothing of this grant holds.
        if (dir === undefined) standing = before;
        else byDir.delete(dir);
        if (hosts().length === 0) await stop();
        throw error;
      }
      return dir;
    },
    /** The running proxy when hosts are granted; undefined means no network at all. */
    async proxy(): Promise<EgressProxy | undefined> {
      return hosts().length === 0 || running === undefined ? undefined : running;
    },
    close() {
      standing = [];
      byDir.clear();
      return stop();
    },
  };
}

/**
 * The environment given, plus the way out: git's `http.proxy` as command-line config
 * (GIT_CONFIG_COUNT/KEY/VALUE, after any the caller set), `http_proxy`/`https_proxy` for
 * other programs, and a ProxyCommand appended to GIT_SSH_COMMAND that reaches the SSH
 * server through the same proxy (CONNECT). Only addresses: no credential is ever added.
 */
function throughProxy(env: Readonly<Record<string, string>>, socat: string): Record<string, string> {
  const out: Record<string, string> = { ...env };
  const count = Number(env.GIT_CONFIG_COUNT ?? '0');
  const index = Number.isSafeInteger(count) && count >= 0 ? count : 0;
  out[`GIT_CONFIG_KEY_${index}`] = 'http.proxy';
  out[`GIT_CONFIG_VALUE_${index}`] = SANDBOX_PROXY.url;
  out.GIT_CONFIG_COUNT = String(index + 1);
  out.http_proxy ??= SANDBOX_PROXY.url;
  out.https_proxy ??= SANDBOX_PROXY.url;
  if (env.GIT_SSH_COMMAND !== undefined) {
    const command = `${socat} - PROXY:${SANDBOX_PROXY.host}:%h:%p,proxyport=${SANDBOX_PROXY.port},nodelay`;
    out.GIT_SSH_COMMAND = `${env.GIT_SSH_COMMAND} -o 'ProxyCommand=${command}'`;
  }
  return out;
}

/** A URL in an argument (`ls-remote https://…`, `-c remote.x.url=ssh://…`), or an ssh command to reach one with. */
function namesRemote(argv: readonly string[], env: Readonly<Record<string, string>>): boolean {
  return env.GIT_SSH_COMMAND !== undefined || argv.some((arg) => arg.includes('://'));
}

/** Whether an argument or the ssh command names `host` (as a URL's host would: between `/` or `@` and `:`, `/` or the end). */
function namesHost(argv: readonly string[], env: Readonly<Record<string, string>>, host: string): boolean {
  const pattern = new RegExp(`[/@\\[]${host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:[\\]:/]|$)`, 'i');
  return [...argv, env.GIT_SSH_COMMAND ?? ''].some((text) => pattern.test(text));
}

/**
 * The folders one command sees besides the system: each private folder of this sandbox
 * that its working folder, arguments or environment name (the engine's work folder, which
 * holds the gitdir, the header file and the SSH key), read-write at its own path; and a
 * working folder outside them, read-write, unless it would show the host's home, the
 * private root (other entries' credentials) or a system folder.
 */
function mountsFor(argv: readonly string[], run: RunOptions, live: ReadonlySet<string>, privateRoot: string): Mount[] {
  const texts = [...argv, ...Object.values(run.env), ...(run.cwd === undefined ? [] : [run.cwd])];
  const dirs = [...live].filter((dir) => texts.some((text) => names(text, dir)));
  const mounts: Mount[] = dirs.map((dir) => ({ source: dir, target: dir, writable: true }));
  const cwd = run.cwd === undefined ? undefined : normalize(run.cwd);
  if (cwd === undefined || cwd === '/' || dirs.some((dir) => within(cwd, dir))) return mounts;
  if (!isAbsolute(cwd)) throw new SandboxSpecError('cwd', cwd, 'is not an absolute path');
  if (within(cwd, privateRoot))
    throw new SandboxSpecError('cwd', cwd, 'is in the private root but not a private folder this sandbox holds');
  for (const shown of [homedir(), privateRoot]) {
    if (within(shown, cwd)) throw new SandboxSpecError('cwd', cwd, `would show ${shown} to the sandbox`);
  }
  if (NEVER_WRITABLE.some((folder) => within(cwd, folder) || within(realpathOr(cwd), folder)))
    throw new SandboxSpecError('cwd', cwd, 'is a system folder');
  return [...mounts, { source: cwd, target: cwd, writable: true }];
}

/** Whether `text` names `path` or something under it (a path ends at `/`, the end, or a character no path here holds). */
function names(text: string, path: string): boolean {
  for (let at = text.indexOf(path); at !== -1; at = text.indexOf(path, at + 1)) {
    const next = text[at + path.length];
    if (next === undefined || !/[A-Za-z0-9._-]/.test(next)) return true;
  }
  return false;
}

function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Programs found once per process. */
const programs = new Map<string, string | undefined>();

/** `name` in `path`, resolved, when it lies in a folder the sandbox shows; otherwise undefined. */
function systemProgram(name: string, path: string): string | undefined {
  const key = `${path}\0${name}`;
  if (programs.has(key)) return programs.get(key);
  let found: string | undefined;
  for (const folder of path.split(':')) {
    if (!isAbsolute(folder)) continue;
    try {
      const program = realpathSync(join(folder, name));
      const stat = statSync(program);
      if (stat.isFile() && (stat.mode & 0o111) !== 0 && SYSTEM_FOLDERS.some((system) => within(program, system))) {
        found = program;
        break;
      }
    } catch {
      // Not here.
    }
  }
  programs.set(key, found);
  return found;
}
