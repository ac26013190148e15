import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { secretsOf } from '../credentials.js';
import type { GitEngine, GitFetchRequest, GitObjectReader, GitRemoteRequest } from '../engine.js';
import { GitInvalidArgumentError, GitIoError, GitPackTooLargeError, GitTransportError } from '../errors.js';
import type { RemoteRef } from '../remote-refs.js';
import { commandFailure, GitCommandError } from './failure.js';
import { localCommandHost, type CommandHost, type CommandResult } from './host.js';
import { childEnv, configArgs, headerConfig, sshCommand, STANDARD_PATH, type SshFiles } from './isolation.js';
import { fetchPack, listRefsOverHttp, readCapabilities, type ServerCapabilities, supports } from './smart-http.js';
import { parseLsRemote } from './ls-remote.js';
import { BatchObjectReader, type LazyTrees } from './reader.js';

export interface SystemGitEngineOptions {
  /** Where commands run; this machine (child processes, no shell) by default. */
  host?: CommandHost;
  /** The git program; `git` (looked up in PATH) by default. */
  git?: string;
  /**
   * Needed for ssh URLs, which are refused without it: the one private key offered and
   * the known_hosts file holding the server's key (absolute paths on the host).
   */
  ssh?: SshFiles;
  /**
   * PATH of every child (git finds ssh through it). By default this process's PATH for
   * the local host, and the standard system folders for any other host.
   */
  path?: string;
  /**
   * util-linux `prlimit`, which caps the size of every file a fetch writes (RLIMIT_FSIZE),
   * so a request's `maxPackBytes` stops the pack at that size as it is received. By default
   * on Linux: for the local host, `prlimit` when PATH has it (else no such cap); for another
   * host, `prlimit`, which its image must then have. `false`: no such cap; the sizes of the
   * directory's blobs are still checked after they are fetched and before any is read.
   */
  prlimit?: string | false;
  /**
   * Speak smart HTTP from this process: over http(s), the ref listing is one protocol v2
   * `ls-refs` request and each fetch one protocol v2 `fetch` request, its pack written into
   * the gitdir and indexed by `git index-pack` (the gitdir is made in-process too), instead
   * of `git ls-remote` and `git fetch` with their HTTP helper processes and a capability
   * request each. The capabilities are asked for once per work folder. The gitdir must then
   * be on this machine (a host that runs commands here). A server that does not speak
   * protocol v2 with what a request needs gets `git ls-remote` or `git fetch` as usual.
   * Default false. SSH is always the git commands.
   */
  httpInProcess?: boolean;
}

/** The remote every fetch names; its URL and promisor settings exist only as `-c` options. */
const REMOTE = 'origin';
/** Where findCommits keeps the remote's branches and tags inside the private gitdir. */
const REFS = 'refs/agentproto';
/** What git's own `--unshallow` sends: deepen to everything. */
const ALL_HISTORY = '2147483647';

/**
 * An engine that runs the `git` program (2.39 or later), over HTTPS and SSH. It brings
 * what isomorphic-git cannot: SSH, and partial clone (`--filter=blob:none`), so a commit's
 * trees come without any file content and then exactly the blobs of one directory come in
 * one request.
 *
 * Every command is isolated from the machine's and the user's configuration: an
 * environment built from nothing, no config but our `-c` options and one file of headers,
 * no hooks, no credential helpers, no prompts, only the transport of the URL, no redirects
 * (see isolation.ts). Credentials never appear on a command line or in an environment:
 * HTTP headers go into a 0600 config file in the work folder, whose path git gets; SSH
 * uses the key file given, and nothing else (no agent, no ssh_config).
 */
export function systemGitEngine(options: SystemGitEngineOptions = {}): GitEngine {
  const engine = engineSetup(options);
  return {
    name: 'system-git',
    protocols: ['https:', 'http:', 'ssh:'],
    listRefs: (request) => listRefs(engine, request),
    fetchCommit: (request) => fetchCommit(engine, request),
    openObjects: (request) => openObjects(engine, request),
    findCommits: (request, prefix) => findCommits(engine, request, prefix),
  };
}

/** What every command of one engine shares: where it runs, which git, PATH, the pack cap, the ssh command. */
interface EngineSetup {
  host: CommandHost;
  git: string;
  path: string;
  prlimit: string | false;
  /** The ssh command line for ssh URLs; undefined when the engine has no `ssh` option. */
  ssh: string | undefined;
  httpInProcess: boolean;
}

function engineSetup(options: SystemGitEngineOptions): EngineSetup {
  const host = options.host ?? localCommandHost();
  const git = options.git ?? 'git';
  const path = options.path ?? (options.host === undefined ? (process.env.PATH ?? STANDARD_PATH) : STANDARD_PATH);
  const prlimit = options.prlimit ?? defaultPrlimit(options.host === undefined ? path : undefined);
  if (typeof git !== 'string' || git === '') throw new GitInvalidArgumentError('git', 'must be a program name or path');
  // Checked now, so a bad path is reported when the engine is made, not mid-operation.
  const ssh = options.ssh === undefined ? undefined : sshCommand(options.ssh);
  return { host, git, path, prlimit, ssh, httpInProcess: options.httpInProcess === true };
}

/** One engine call: the engine's setup, and the request's remote, credentials, work folder and signal. */
interface Session extends EngineSetup {
  url: string;
  scheme: 'https' | 'http' | 'ssh';
  headers: Readonly<Record<string, string>>;
  secrets: readonly string[];
  workDir: string;
  /** For commands that talk to the remote: the header file and the ssh command; made on first use. */
  remoteEnv: Record<string, string> | undefined;
  /** For commands on the gitdir alone: no credentials at all. */
  localEnv: Record<string, string>;
  signal: AbortSignal | undefined;
  /** The server's protocol v2 capabilities (httpInProcess): asked for at most once per engine call. */
  capabilities?: Promise<ServerCapabilities>;
}

/** The operation's setup: where to run, which config and ssh command to give git. */
async function session(engine: EngineSetup, request: GitRemoteRequest): Promise<Session> {
  const { url, workDir } = request;
  if (url.startsWith('-')) throw new GitInvalidArgumentError('url', 'must not start with -');
  if (typeof workDir !== 'string' || !workDir.startsWith('/')) {
    throw new GitInvalidArgumentError('workDir', 'the system-git engine needs an absolute work folder');
  }
  const scheme = schemeOf(url);
  if (scheme === 'ssh' && engine.ssh === undefined) {
    throw new GitInvalidArgumentError(
      'engine',
      "ssh URLs need the system-git engine's ssh option (identityFile, knownHostsFile)",
    );
  }
  return {
    ...engine,
    url,
    scheme,
    headers: scheme === 'ssh' ? {} : request.headers,
    secrets: secretsOf(request.headers),
    workDir,
    remoteEnv: undefined,
    localEnv: childEnv({ path: engine.path, workDir }),
    signal: request.signal,
  };
}

async function listRefs(engine: EngineSetup, request: GitRemoteRequest): Promise<RemoteRef[]> {
  const s = await session(engine, request);
  // In-process (httpInProcess): the capabilities, then `ls-refs`; the capabilities are kept
  // for the fetches that follow in the same work folder.
  const capabilities = capabilitiesOf(s);
  if (capabilities !== undefined && (await capabilities).lsRefs) return listRefsOverHttp(httpSessionOf(s));
  const result = await remote(s, ['ls-remote', '--symref', '--', s.url], {});
  return parseLsRemote(result.stdout.toString('utf8'), s.url);
}

async function fetchCommit(engine: EngineSetup, request: GitFetchRequest): Promise<GitObjectReader> {
  const s = await session(engine, request);
  const { gitdir, commit, maxPackBytes } = request;
  const partial = request.blobs === false;
  // Trees only down to a depth (directoryTreeId): git's own filter, with blobs left out too.
  const depth = partial ? request.treeDepth : undefined;
  if (depth !== undefined && (!Number.isSafeInteger(depth) || depth < 0))
    throw new GitInvalidArgumentError('treeDepth', 'must be a whole number, 0 or more');
  if (partial && depth === undefined) {
    // Nothing yet: the walk names its directory (preloadTrees) before it reads, and then
    // only the trees on the way there and the directory's own travel, not every tree of
    // the commit. A reader used without that announcement fetches them all first.
    return reader(s, gitdir, true, maxPackBytes, {
      everything: (signal) => fetchTrees(s, gitdir, commit, 'blob:none', maxPackBytes, signal),
      pathTo: (path, signal) => fetchTrees(s, gitdir, commit, treeFilter(pathDepth(path)), maxPackBytes, signal),
    });
  }
  await fetchTrees(s, gitdir, commit, !partial ? undefined : treeFilter(depth), maxPackBytes, s.signal);
  return reader(s, gitdir, partial, maxPackBytes);
}

/** The filter for the trees down to `depth` (undefined: every tree), never a blob. */
function treeFilter(depth: number | undefined): string {
  return depth === undefined ? 'blob:none' : depth === 0 ? 'tree:0' : `combine:blob:none+tree:${depth}`;
}

/** How many trees deep a directory is below the root tree; its parent's trees suffice to name it. */
function pathDepth(path: string): number | undefined {
  // The whole commit: its root tree's subtree is every tree.
  return path === '' ? undefined : path.split('/').length;
}

/**
 * Fetches `commit` with what `filter` keeps (undefined: everything) into the gitdir, made
 * first if need be, unless the gitdir already holds all of it.
 */
async function fetchTrees(
  s: Session,
  gitdir: string,
  commit: string,
  filter: string | undefined,
  maxPackBytes: number | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  // Everything asked for already here (directoryTree, then fetchDirectory with the same
  // work folder)? rev-list walks the commit's trees (and blobs, unless partial) and fails
  // on the first missing object, without fetching it.
  const check = ['rev-list', '--objects', '--no-walk', ...(filter ? [`--filter=${filter}`] : []), '--quiet', commit];
  // In-process HTTP: the capabilities are asked for while the gitdir is made (or checked).
  void capabilitiesOf(s);
  if ((await init(s, gitdir)) === 'existing' && (await local(s, gitdir, check, undefined, signal)).code === 0) return;
  // No negotiation in-process: the commit comes with what the filter keeps, whatever the gitdir holds.
  const fetched = await fetchInProcess(s, gitdir, {
    wants: [commit],
    ...(filter === undefined ? {} : { filter }),
    shallow: true,
    commit,
    maxPackBytes,
    signal,
  });
  if (fetched) return;
  // --refetch: the commit may be here without its trees (findCommits fetches commits
  // only), and git would otherwise take the commit for complete and fetch nothing.
  await remote(
    s,
    [
      'fetch',
      '--refetch',
      '--depth=1',
      '--no-tags',
      '--no-write-fetch-head',
      '--recurse-submodules=no',
      '--no-auto-maintenance',
      ...(filter ? [`--filter=${filter}`] : []),
      REMOTE,
      commit,
    ],
    {
      gitdir,
      config: [`remote.${REMOTE}.url=${s.url}`, ...(filter ? promisor(filter) : [])],
      commit,
      maxPackBytes,
      signal,
    },
  );
}

async function openObjects(engine: EngineSetup, request: GitFetchRequest): Promise<GitObjectReader> {
  return reader(await session(engine, request), request.gitdir, request.blobs === false, request.maxPackBytes);
}

async function findCommits(
  engine: EngineSetup,
  request: GitRemoteRequest & { gitdir: string; maxPackBytes?: number },
  prefix: string,
): Promise<string[]> {
  if (!/^[0-9a-f]{4,40}$/.test(prefix))
    throw new GitInvalidArgumentError('prefix', 'must be 4 to 40 lower-case hex digits');
  const s = await session(engine, request);
  const { gitdir } = request;
  const shallow = await local(s, gitdir, ['rev-parse', '--is-shallow-repository']);
  if (shallow.code !== 0) await init(s, gitdir);
  const deepen = shallow.code === 0 && shallow.stdout.toString('utf8').trim() === 'true';
  // Commits only (`tree:0`), where the server allows filters; every branch and tag,
  // into a namespace of our own so they are the walk's only starting points.
  await remote(
    s,
    [
      'fetch',
      '--no-tags',
      '--no-write-fetch-head',
      '--prune',
      '--recurse-submodules=no',
      '--no-auto-maintenance',
      '--filter=tree:0',
      ...(deepen ? [`--depth=${ALL_HISTORY}`] : []),
      REMOTE,
      `+refs/heads/*:${REFS}/heads/*`,
      `+refs/tags/*:${REFS}/tags/*`,
    ],
    {
      gitdir,
      config: [`remote.${REMOTE}.url=${s.url}`, ...promisor('tree:0')],
      maxPackBytes: request.maxPackBytes,
    },
  );
  const named = (await mustLocal(s, gitdir, ['rev-parse', `--disambiguate=${prefix}`])).stdout.toString('utf8');
  const ids = named.split('\n').filter((line) => /^[0-9a-f]{40}$/.test(line));
  if (ids.length === 0) return [];
  const types = (await mustLocal(s, gitdir, ['cat-file', '--batch-check'], `${ids.join('\n')}\n`)).stdout.toString(
    'utf8',
  );
  const commits = types
    .split('\n')
    .map((line) => /^([0-9a-f]{40}) commit \d+$/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
  if (commits.length === 0) return [];
  // The gitdir may hold other commits (an earlier fetchCommit of an unreachable one):
  // rev-list prints those not reachable from the remote's refs, and they are dropped.
  const unreachable = (
    await mustLocal(s, gitdir, ['rev-list', ...commits, '--not', `--glob=${REFS}/*`])
  ).stdout.toString('utf8');
  const dropped = new Set(unreachable.split('\n'));
  return commits.filter((id) => !dropped.has(id));
}

/**
 * The environment of commands that talk to the remote. The header file is written the
 * first time one runs (a gitdir that already holds everything needs none), once per
 * engine call: a unique name, created with mode 0600, never through an existing name.
 * HTTP headers only mean something to HTTP: an SSH request gets no file at all.
 */
async function remoteEnv(s: Session): Promise<Record<string, string>> {
  if (s.remoteEnv) return s.remoteEnv;
  let globalConfig: string | undefined;
  if (Object.keys(s.headers).length > 0) {
    globalConfig = join(s.workDir, `agentproto-headers-${randomBytes(8).toString('hex')}.gitconfig`);
    try {
      await s.host.writeFile(globalConfig, headerConfig(s.headers), { mode: 0o600 });
    } catch (error) {
      throw new GitIoError(globalConfig, 'write the header config file', error);
    }
  }
  s.remoteEnv = childEnv({
    path: s.path,
    workDir: s.workDir,
    ...(globalConfig === undefined ? {} : { globalConfig }),
    ...(s.scheme === 'ssh' && s.ssh !== undefined ? { sshCommand: s.ssh } : {}),
  });
  return s.remoteEnv;
}

/** A reader over the gitdir, fetching what it lacks from the session's remote. */
function reader(
  s: Session,
  gitdir: string,
  blobless: boolean,
  maxPackBytes: number | undefined,
  lazy?: LazyTrees,
): GitObjectReader {
  const fetchObjects = async (oids: readonly string[], signal: AbortSignal | undefined, whole = false) => {
    const filter = whole ? undefined : 'blob:none';
    if (
      await fetchInProcess(s, gitdir, {
        wants: oids,
        ...(filter === undefined ? {} : { filter }),
        maxPackBytes,
        signal,
      })
    )
      return;
    // The header file is still in the work folder: the caller removes it at the end.
    // `whole`: no filter, so a tree comes with every tree and blob under it. The remote is
    // still a promisor (the gitdir's earlier packs lack objects), with no default filter.
    await remote(
      s,
      [
        'fetch',
        '--stdin',
        '--no-tags',
        '--no-write-fetch-head',
        '--recurse-submodules=no',
        '--no-auto-maintenance',
        ...(whole ? [] : ['--filter=blob:none']),
        REMOTE,
      ],
      {
        gitdir,
        config: [`remote.${REMOTE}.url=${s.url}`, ...(whole ? promisor() : promisor('blob:none'))],
        stdin: `${oids.join('\n')}\n`,
        signal,
        maxPackBytes,
      },
    );
  };
  return new BatchObjectReader(
    gitdir,
    (args, stdin, signal) => local(s, gitdir, args, stdin, signal),
    fetchObjects,
    s.signal,
    blobless,
    lazy,
  );
}

/**
 * A fetch over http(s) made in-process (httpInProcess), when the server's capabilities
 * allow it; false when it must be left to `git fetch`. The pack is indexed as a promisor
 * pack: the gitdir is partial, and git must not take its missing objects for corruption.
 */
async function fetchInProcess(
  s: Session,
  gitdir: string,
  request: {
    wants: readonly string[];
    filter?: string;
    shallow?: boolean;
    commit?: string;
    maxPackBytes: number | undefined;
    signal: AbortSignal | undefined;
  },
): Promise<boolean> {
  const capabilities = capabilitiesOf(s);
  if (capabilities === undefined || !supports(await capabilities, request)) return false;
  const http = httpSessionOf(s);
  const { signal } = request;
  await fetchPack(
    { ...http, signal: signal ?? s.signal },
    {
      gitdir,
      wants: request.wants,
      ...(request.filter === undefined ? {} : { filter: request.filter }),
      ...(request.shallow ? { shallow: true } : {}),
      ...(request.commit === undefined ? {} : { commit: request.commit }),
      ...(request.maxPackBytes === undefined ? {} : { maxPackBytes: request.maxPackBytes }),
      signal: signal ?? s.signal,
      indexPack: (packFile) => local(s, gitdir, ['index-pack', '--promisor', packFile], undefined, signal),
    },
  );
  return true;
}

/**
 * The server's capabilities (httpInProcess over http(s) only), asked for once per engine
 * call and kept for the calls of the same work folder (readCapabilities). Asking may start
 * before it is needed (beside the gitdir's check): the promise is marked handled, and a
 * failure is thrown where it is awaited.
 */
function capabilitiesOf(s: Session): Promise<ServerCapabilities> | undefined {
  if (!s.httpInProcess || s.scheme === 'ssh') return undefined;
  if (s.capabilities === undefined) {
    s.capabilities = readCapabilities(httpSessionOf(s));
    s.capabilities.catch(() => undefined);
  }
  return s.capabilities;
}

function httpSessionOf(s: Session) {
  return { url: s.url, workDir: s.workDir, headers: s.headers, secrets: s.secrets, signal: s.signal };
}

/** A command that talks to the remote: the header file and ssh command, and only the URL's transport. */
async function remote(
  s: Session,
  args: readonly string[],
  extra: {
    gitdir?: string;
    config?: readonly string[];
    stdin?: string;
    signal?: AbortSignal | undefined;
    commit?: string;
    maxPackBytes?: number | undefined;
  },
): Promise<CommandResult> {
  const command = args.find((arg) => !arg.startsWith('-')) ?? 'git';
  const env = await remoteEnv(s);
  const signal = extra.signal ?? s.signal;
  const { prlimit } = s;
  const capped = extra.maxPackBytes !== undefined && prlimit !== false;
  const argv = [
    ...(capped ? packCap(prlimit, extra.maxPackBytes as number) : []),
    s.git,
    ...configArgs(s.scheme),
    '-c',
    'fetch.negotiationAlgorithm=noop',
    // One pack file per fetch, never loose objects: the file size cap then bounds the
    // whole transfer, not each object.
    ...(capped ? ['-c', 'fetch.unpackLimit=1', '-c', 'transfer.unpackLimit=1'] : []),
    ...(extra.config ?? []).flatMap((setting) => ['-c', setting]),
    ...(extra.gitdir === undefined ? [] : [`--git-dir=${extra.gitdir}`]),
    ...args,
  ];
  const result = await s.host.run(argv, {
    env,
    cwd: s.workDir,
    ...(extra.stdin === undefined ? {} : { stdin: extra.stdin }),
    ...(signal === undefined ? {} : { signal }),
  });
  if (result.code !== 0) {
    // index-pack's write past RLIMIT_FSIZE fails with EFBIG (SIGXFSZ is ignored, see
    // packCap); a line from the server comes prefixed `remote:` and does not match.
    if (capped && /^(?:fatal|error): [^\n]*File too large/m.test(result.stderr.toString('utf8'))) {
      throw new GitPackTooLargeError(s.url, extra.maxPackBytes as number);
    }
    throw commandFailure(result.stderr, result.code, {
      url: s.url,
      command,
      secrets: s.secrets,
      ...(extra.commit === undefined ? {} : { commit: extra.commit }),
    });
  }
  return result;
}

/** A command on the private gitdir alone: no transport allowed, no credentials given. */
function local(
  s: Session,
  gitdir: string,
  args: readonly string[],
  stdin?: string,
  signal?: AbortSignal,
): Promise<CommandResult> {
  const stop = signal ?? s.signal;
  return s.host.run([s.git, ...configArgs(undefined), `--git-dir=${gitdir}`, ...args], {
    env: s.localEnv,
    cwd: s.workDir,
    ...(stdin === undefined ? {} : { stdin }),
    ...(stop ? { signal: stop } : {}),
  });
}

/** A local command whose failure is an I/O failure on the gitdir (GitIoError, git's stderr in the cause). */
async function mustLocal(s: Session, gitdir: string, args: readonly string[], stdin?: string): Promise<CommandResult> {
  const result = await local(s, gitdir, args, stdin);
  if (result.code !== 0) {
    const cause = new GitCommandError(
      args[0] ?? 'git',
      result.code,
      result.stderr.toString('utf8').trim().slice(0, 4096),
    );
    throw new GitIoError(gitdir, `run git ${args[0] ?? ''} in`, cause);
  }
  return result;
}

/**
 * The gitdir `git init --bare --template=` makes, made by this process (httpInProcess: the
 * gitdir is on this machine): a process less. Only a new one: when the folder exists
 * (`undefined`), git init looks at it as before.
 */
async function initHere(gitdir: string): Promise<'created' | undefined> {
  try {
    await mkdir(gitdir, { mode: 0o755 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw new GitIoError(gitdir, 'make a gitdir at', error);
  }
  try {
    for (const folder of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags'])
      await mkdir(join(gitdir, folder), { recursive: true, mode: 0o755 });
    await writeFile(join(gitdir, 'HEAD'), 'ref: refs/heads/master\n', { flag: 'wx', mode: 0o644 });
    await writeFile(join(gitdir, 'config'), BARE_CONFIG, { flag: 'wx', mode: 0o644 });
  } catch (error) {
    throw new GitIoError(gitdir, 'make a gitdir at', error);
  }
  return 'created';
}

/** The config of a new bare gitdir, as git 2.39 writes it. */
const BARE_CONFIG = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n';

/**
 * Makes the gitdir, or leaves an existing one as it is (git init never overwrites), and
 * says which: a fresh gitdir holds nothing, so there is nothing to check in it.
 * `git init --bare --template=`: no sample hooks, no description, nothing but a repository.
 */
async function init(s: Session, gitdir: string): Promise<'created' | 'existing'> {
  if (s.httpInProcess && s.scheme !== 'ssh' && (await initHere(gitdir)) === 'created') return 'created';
  const result = await s.host.run([s.git, ...configArgs(undefined), 'init', '--bare', '--template=', '--', gitdir], {
    env: s.localEnv,
    cwd: s.workDir,
    ...(s.signal ? { signal: s.signal } : {}),
  });
  if (result.code !== 0) {
    const cause = new GitCommandError('init', result.code, result.stderr.toString('utf8').trim().slice(0, 4096));
    throw new GitIoError(gitdir, 'make a gitdir at', cause);
  }
  // LANG=C: "Initialized empty Git repository …" or "Reinitialized existing Git repository …".
  return result.stdout.toString('utf8').startsWith('Reinitialized') ? 'existing' : 'created';
}

/**
 * The promisor settings a filtered fetch needs (git refuses `--filter` without a promisor
 * remote, and its connectivity check must accept the missing objects). Given as `-c` to
 * that one command, with the filter too: git then finds the remote registered and writes
 * nothing to the gitdir's config, so no later read sees a promisor and lazily fetches.
 * Without a filter (a fetch of a tree whole into a partial gitdir): the promisor alone, as
 * a configured filter would be taken as the default of that fetch.
 */
function promisor(filter?: string): string[] {
  return [
    `remote.${REMOTE}.promisor=true`,
    ...(filter === undefined ? [] : [`remote.${REMOTE}.partialclonefilter=${filter}`]),
  ];
}

/**
 * `prlimit` on Linux. On the local host only when one of `path`'s folders has it, so a
 * machine without util-linux's prlimit still fetches (under the blob size checks alone)
 * instead of failing every fetch.
 */
function defaultPrlimit(localPath: string | undefined): string | false {
  if (process.platform !== 'linux') return false;
  if (localPath === undefined) return 'prlimit';
  const found = localPath
    .split(':')
    .filter((folder) => folder.startsWith('/'))
    .map((folder) => `${folder}/prlimit`)
    .find((candidate) => {
      try {
        accessSync(candidate, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  return found ?? false;
}

/**
 * The prefix that runs git with every file it writes capped at `bytes` (RLIMIT_FSIZE,
 * inherited by index-pack, which writes the received pack as it arrives), so the pack
 * stops at the cap instead of being checked once complete. SIGXFSZ is ignored (the
 * disposition survives exec) so the write fails with EFBIG and git says "File too large",
 * rather than index-pack dying with an unclear message.
 */
function packCap(prlimit: string, bytes: number): string[] {
  return [prlimit, `--fsize=${bytes}`, '--', 'sh', '-c', 'trap "" XFSZ; exec "$0" "$@"'];
}

/** The transport of a normalized URL: scp-like addresses (`host:path`) are ssh. */
function schemeOf(url: string): 'https' | 'http' | 'ssh' {
  if (url.startsWith('https://')) return 'https';
  if (url.startsWith('http://')) return 'http';
  if (url.startsWith('ssh://') || !url.includes('://')) return 'ssh';
  throw new GitTransportError(url, 'the system-git engine speaks https, http and ssh only');
}
