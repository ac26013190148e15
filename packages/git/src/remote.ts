import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HttpClient } from 'isomorphic-git';
import { raceAbort, settled, throwIfAborted } from './abort.js';
import { authHeaders, secretsOf, type GitAuth } from './credentials.js';
import type { GitEngine } from './engine.js';
import { GitAbortedError, GitError, GitInvalidArgumentError, GitIoError, GitTransportError } from './errors.js';
import { isomorphicGitEngine } from './isomorphic-git/engine.js';
import { scrubError } from './redact.js';
import { normalizeRemoteUrl } from './url.js';

/** What every network operation takes. */
export interface RemoteOptions {
  /** Credentials, as HTTP headers for the URL; the only way to send any. */
  auth?: GitAuth;
  /** Aborts the operation; it then rejects with GitAbortedError and leaves nothing behind. */
  signal?: AbortSignal;
  /** The transport; isomorphicGitEngine() by default. */
  engine?: GitEngine;
  /** HTTP client of the default engine (isomorphic-git's HttpClient). Not combined with `engine`. */
  http?: HttpClient;
  /** Allow plain http to hosts that are not loopback (credentials would travel in clear). */
  allowInsecureHttp?: boolean;
  /**
   * A private folder (0700) the caller made and will remove: the gitdir goes to
   * `<workDir>/git` and engines may write credential files next to it. Operations given
   * the same workDir share what was fetched (directoryTree, then fetchDirectory fetching
   * only the directory's blobs). Without it, each operation makes its own temporary
   * folder under `privateDir` and removes it before it settles.
   */
  workDir?: string;
  /** Where a temporary work folder is made when `workDir` is not given; `os.tmpdir()` by default. */
  privateDir?: string;
}

/** The engine to use and the URL in the form it receives. Throws before any I/O. */
export function openRemote(url: string, options: RemoteOptions): { engine: GitEngine; url: string } {
  if (options.engine !== undefined && options.http !== undefined) {
    throw new GitInvalidArgumentError(
      'options',
      '`http` configures the default engine; with `engine`, configure the engine itself (isomorphicGitEngine({ http }))',
    );
  }
  const engine = options.engine ?? isomorphicGitEngine(options.http === undefined ? {} : { http: options.http });
  const normalized = normalizeRemoteUrl(url, {
    protocols: engine.protocols,
    engine: engine.name,
    ...(options.allowInsecureHttp === undefined ? {} : { allowInsecureHttp: options.allowInsecureHttp }),
  });
  return { engine, url: normalized };
}

/** An engine failure as a GitError: engines should throw ours, anything else is a transport failure. */
function engineError(error: unknown, url: string): unknown {
  if (error instanceof GitError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  const reason = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown error';
  return new GitTransportError(url, reason, undefined, error);
}

/**
 * The error an operation rejects with: GitAbortedError once the signal has fired, whatever
 * else went wrong meanwhile; and never holding a header value of the request.
 */
function finalError(
  error: unknown,
  operation: string,
  signal: AbortSignal | undefined,
  secrets: readonly string[],
): unknown {
  const final =
    signal?.aborted && !(error instanceof GitAbortedError) ? new GitAbortedError(operation, signal.reason) : error;
  return scrubError(final, secrets);
}

/** How long an aborted engine gets to unwind before its private folder is removed anyway. */
const UNWIND_MS = 2000;

/**
 * The engine calls of one operation: each one's error becomes a GitError, the caller's
 * await ends the moment the signal fires, and `unwind` waits (a bounded time) for the
 * calls still running, so a folder is never removed under a process still writing to it.
 */
class EngineCalls {
  private readonly pending: Promise<unknown>[] = [];

  constructor(
    private readonly operation: string,
    private readonly url: string,
    private readonly signal: AbortSignal | undefined,
  ) {}

  run<T>(work: Promise<T>): Promise<T> {
    const translated = work.catch((error: unknown) => {
      throw engineError(error, this.url);
    });
    this.pending.push(translated);
    return raceAbort(translated, this.signal, this.operation);
  }

  async unwind(): Promise<void> {
    if (this.pending.length > 0) await settled(Promise.allSettled(this.pending), UNWIND_MS);
  }
}

interface WorkDir {
  path: string;
  /** `<path>/git`, where engines keep objects. */
  gitdir: string;
  /** Made by this operation, so removed by it. */
  owned: boolean;
}

/** The caller's workDir, checked before any I/O; undefined when there is none. */
export function givenWorkDir(options: RemoteOptions): string | undefined {
  const { workDir } = options;
  if (workDir === undefined) return undefined;
  if (typeof workDir !== 'string' || workDir === '')
    throw new GitInvalidArgumentError('workDir', 'must be a non-empty path');
  if (/[\0\r\n]/.test(workDir)) throw new GitInvalidArgumentError('workDir', 'must not contain NUL or line breaks');
  return resolve(workDir);
}

/**
 * The caller's folder, or a fresh one made with mkdtemp (mode 0700: credential files and
 * fetched objects are nobody else's business) under `privateDir`.
 */
async function openWorkDir(given: string | undefined, privateDir: string | undefined): Promise<WorkDir> {
  if (given !== undefined) return { path: given, gitdir: join(given, 'git'), owned: false };
  const parent = privateDir ?? tmpdir();
  let path: string;
  try {
    path = await mkdtemp(join(parent, 'agentproto-git-'));
  } catch (error) {
    throw new GitIoError(parent, 'make a private work folder in', error);
  }
  return { path, gitdir: join(path, 'git'), owned: true };
}

/** Removes a work folder this operation made; a caller's is left to the caller. */
async function closeWorkDir(work: WorkDir | undefined): Promise<void> {
  if (work?.owned) await rm(work.path, { recursive: true, force: true, maxRetries: 3 });
}

/** What an operation's body gets: the credential headers, the work folder, the engine calls. */
export interface EngineSession {
  headers: Readonly<Record<string, string>>;
  work: WorkDir;
  calls: EngineCalls;
}

/**
 * The frame every network operation runs in: a work folder (the caller's, or a fresh one),
 * the headers from `options.auth`, then `body`. Whatever happens, the engine calls are
 * unwound before a folder of ours is removed, and the error thrown is GitAbortedError once
 * the signal has fired and never holds a header value. `given` is the caller's workDir,
 * checked (givenWorkDir) before the caller did any I/O.
 */
export async function withEngineSession<T>(
  operation: string,
  url: string,
  options: RemoteOptions,
  given: string | undefined,
  body: (session: EngineSession) => Promise<T>,
): Promise<T> {
  const { signal } = options;
  const calls = new EngineCalls(operation, url, signal);
  let work: WorkDir | undefined;
  let secrets: readonly string[] = [];
  try {
    work = await openWorkDir(given, options.privateDir);
    // The host's own callback: what it throws passes through (scrubbed, like everything).
    const headers = await authHeaders(options.auth, url);
    secrets = secretsOf(headers);
    throwIfAborted(signal, operation);
    return await body({ headers, work, calls });
  } catch (error) {
    throw finalError(error, operation, signal, secrets);
  } finally {
    await calls.unwind();
    await closeWorkDir(work);
  }
}
