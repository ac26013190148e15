import type * as IsomorphicGit from 'isomorphic-git';
import type { HttpClient } from 'isomorphic-git';
import type { GitEngine, GitObjectReader, GitObjectType, GitRawObject } from '../engine.js';
import { untilAborted } from '../abort.js';
import {
  GitAuthFailedError,
  GitError,
  GitPackTooLargeError,
  GitRepositoryNotFoundError,
  GitTransportError,
} from '../errors.js';
import type { RemoteRef } from '../remote-refs.js';
import { guardedHttp } from './guarded-http.js';
import { privateFs } from './private-fs.js';

/**
 * isomorphic-git and its HTTP client, loaded by the first call that needs them: a host that
 * imports this package for anything else (a ref-name check, the system-git engine) loads no
 * isomorphic-git (measured: importing the package cost 270 ms of CPU, most of it this).
 */
let library: Promise<typeof IsomorphicGit> | undefined;
const git = () => (library ??= import('isomorphic-git'));
const fetchPack: typeof IsomorphicGit.fetch = async (args) => (await git()).fetch(args);
const init: typeof IsomorphicGit.init = async (args) => (await git()).init(args);
const listBranches: typeof IsomorphicGit.listBranches = async (args) => (await git()).listBranches(args);
const listServerRefs: typeof IsomorphicGit.listServerRefs = async (args) => (await git()).listServerRefs(args);
const listTags: typeof IsomorphicGit.listTags = async (args) => (await git()).listTags(args);
const readObject: typeof IsomorphicGit.readObject = async (args) => (await git()).readObject(args);
const resolveRef: typeof IsomorphicGit.resolveRef = async (args) => (await git()).resolveRef(args);
const setConfig: typeof IsomorphicGit.setConfig = async (args) => (await git()).setConfig(args);
const nodeRequest: HttpClient['request'] = async (request) =>
  (await import('isomorphic-git/http/node')).request(request);

export interface IsomorphicGitEngineOptions {
  /** isomorphic-git's HTTP client; `isomorphic-git/http/node` by default. */
  http?: HttpClient;
}

/**
 * The default engine: pure JavaScript, smart HTTP(S) only. Lists refs with protocol v2
 * (`ls-refs` with `peel` and `symrefs`). Fetches with isomorphic-git's `fetch`, which
 * speaks protocol v0/v1: one `want <commit>` with `depth 1`, so the pack holds that
 * commit and its whole tree, and no history. Over HTTP, git's upload-pack accepts a want
 * for any commit reachable from a ref (stateless RPC checks reachability) even without
 * `uploadpack.allowReachableSHA1InWant`; an unreachable commit is not sent, which the
 * caller reports as GitCommitUnavailableError.
 *
 * It has no partial clone: `blobs: false` is ignored and every blob of the commit comes
 * with it, so its reader needs no `prefetch`. A gitdir that already holds the commit (from
 * an earlier call with the same work folder) is used again without a request: everything
 * this engine fetches is complete (a commit with its whole tree).
 */
export function isomorphicGitEngine(options: IsomorphicGitEngineOptions = {}): GitEngine {
  const client = options.http ?? { request: nodeRequest };
  return {
    name: 'isomorphic-git',
    protocols: ['https:', 'http:'],

    async listRefs({ url, headers, signal }) {
      try {
        const refs = await listServerRefs({
          http: guardedHttp(client, { signal, credentials: Object.keys(headers) }),
          url,
          // A fresh object per call: isomorphic-git adds its own headers to the one it gets.
          headers: { ...headers },
          protocolVersion: 2,
          peelTags: true,
          symrefs: true,
        });
        return refs.map(
          (ref): RemoteRef => ({
            name: ref.ref,
            oid: ref.oid,
            ...(ref.peeled === undefined ? {} : { peeled: ref.peeled }),
            ...(ref.target === undefined ? {} : { symref: ref.target }),
          }),
        );
      } catch (error) {
        throw translateError(error, url);
      }
    },

    async fetchCommit({ url, headers, signal: callerSignal, commit, gitdir, maxPackBytes }) {
      const { signal, fs, http, done } = cappedFetch(client, { url, headers, gitdir, callerSignal, maxPackBytes });
      const cache = {};
      try {
        await prepareGitdir(fs, gitdir);
        if (!(await holds(fs, gitdir, commit, cache))) {
          await untilAborted(
            fetchPack({
              fs,
              cache,
              http,
              gitdir,
              url,
              ref: commit,
              remoteRef: commit,
              singleBranch: true,
              depth: 1,
              tags: false,
              headers: { ...headers },
            }),
            signal,
          );
        }
      } catch (error) {
        throw translateError(error, url);
      } finally {
        done();
      }
      return objectReader(privateFs(gitdir, callerSignal), gitdir, cache);
    },

    /**
     * Fetches the history of every branch and tag (isomorphic-git has no filter, so with
     * trees and blobs), then walks it from each ref for the ids starting with `prefix`.
     */
    async findCommits({ url, headers, signal: callerSignal, gitdir, maxPackBytes }, prefix) {
      // The whole history with its trees and blobs (no filter here): under the same pack cap.
      const capped = cappedFetch(client, { url, headers, gitdir, callerSignal, maxPackBytes });
      const { signal } = capped;
      const fs = capped.fs;
      const cache = {};
      try {
        await prepareGitdir(fs, gitdir);
        await untilAborted(
          fetchPack({
            fs,
            cache,
            http: capped.http,
            gitdir,
            url,
            singleBranch: false,
            tags: true,
            // What `git fetch --unshallow` asks for: a gitdir holding a shallow fetch of one
            // commit (fetchCommit, same work folder) would otherwise stop the history there.
            depth: ALL_HISTORY,
            prune: true,
            pruneTags: true,
            headers: { ...headers },
          }),
          signal,
        );
      } catch (error) {
        throw translateError(error, url);
      } finally {
        capped.done();
      }
      const tips: string[] = [];
      const refs = [
        ...(await listBranches({ fs, gitdir, remote: 'origin' })).map((name) => `refs/remotes/origin/${name}`),
        ...(await listTags({ fs, gitdir })).map((name) => `refs/tags/${name}`),
      ];
      for (const ref of refs) {
        if (ref === 'refs/remotes/origin/HEAD') continue;
        const commit = await peelToCommit(fs, gitdir, await resolveRef({ fs, gitdir, ref }), cache);
        if (commit !== undefined) tips.push(commit);
      }
      return walkHistory(fs, gitdir, tips, prefix, cache, signal);
    },
  };
}

type PrivateFs = ReturnType<typeof privateFs>;

/**
 * The file system, HTTP client and signal of one fetch under a pack cap. Our own signal, so
 * the cap stops the fetch as the caller's abort does: the body read past the cap fails,
 * the file system refuses every write from then on, and the fetch rejects at once with the
 * cap's error. Before isomorphic-git indexes a pack (inflating every object in memory), the
 * pack's objects are checked to inflate to at most the cap: a compressed bomb never is.
 */
function cappedFetch(
  client: HttpClient,
  {
    url,
    headers,
    gitdir,
    callerSignal,
    maxPackBytes,
  }: {
    url: string;
    headers: Readonly<Record<string, string>>;
    gitdir: string;
    callerSignal: AbortSignal | undefined;
    maxPackBytes: number | undefined;
  },
): { signal: AbortSignal; fs: PrivateFs; http: HttpClient; done: () => void } {
  const stop = new AbortController();
  const onCallerAbort = () => stop.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const signal = stop.signal;
  const fs = privateFs(
    gitdir,
    signal,
    maxPackBytes === undefined
      ? undefined
      : {
          maxObject: maxPackBytes,
          maxTotal: maxPackBytes,
          refuse: (problem) => {
            throw problem.kind === 'malformed'
              ? new GitTransportError(url, `the server sent a malformed pack (${problem.reason})`)
              : new GitPackTooLargeError(url, maxPackBytes);
          },
        },
  );
  const onOverflow = (max: number) => stop.abort(new GitPackTooLargeError(url, max));
  const http = guardedHttp(client, {
    signal,
    credentials: Object.keys(headers),
    ...(maxPackBytes === undefined ? {} : { maxBodyBytes: maxPackBytes, onOverflow }),
  });
  return { signal, fs, http, done: () => callerSignal?.removeEventListener('abort', onCallerAbort) };
}

/** git's own "infinite" depth (INFINITE_DEPTH in git's shallow.h). */
const ALL_HISTORY = 0x7fffffff;

async function prepareGitdir(fs: PrivateFs, gitdir: string): Promise<void> {
  // init leaves an existing gitdir as it is (it returns when the config exists).
  await init({ fs, gitdir, bare: true, defaultBranch: 'main' });
  // fetch insists on a refspec for the remote; a commit id matches none, so fetchCommit writes no ref.
  await setConfig({ fs, gitdir, path: 'remote.origin.fetch', value: '+refs/heads/*:refs/remotes/origin/*' });
}

async function holds(fs: PrivateFs, gitdir: string, oid: string, cache: object): Promise<boolean> {
  try {
    await readObject({ fs, gitdir, oid, format: 'deflated', cache });
    return true;
  } catch {
    return false;
  }
}

/** The commit a ref stands for: an annotated tag is followed to what it points at; anything but a commit is skipped. */
async function peelToCommit(fs: PrivateFs, gitdir: string, oid: string, cache: object): Promise<string | undefined> {
  let current = oid;
  for (let depth = 0; depth < 10; depth += 1) {
    const object = await readObject({ fs, gitdir, oid: current, cache });
    if (object.type === 'commit') return current;
    if (object.type !== 'tag') return undefined;
    const tag = object.object as { object?: unknown };
    if (typeof tag.object !== 'string') return undefined;
    current = tag.object;
  }
  return undefined;
}

/** Every commit reachable from `tips`, each visited once, keeping those whose id starts with `prefix`. */
async function walkHistory(
  fs: PrivateFs,
  gitdir: string,
  tips: readonly string[],
  prefix: string,
  cache: object,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const seen = new Set<string>(tips);
  const pending = [...tips];
  const found: string[] = [];
  while (pending.length > 0) {
    signal?.throwIfAborted();
    const oid = pending.pop() as string;
    let object;
    try {
      object = await readObject({ fs, gitdir, oid, cache });
    } catch {
      continue; // a shallow boundary: its parents were never fetched
    }
    if (object.type !== 'commit') continue;
    if (oid.startsWith(prefix)) found.push(oid);
    for (const parent of (object.object as { parent?: string[] }).parent ?? []) {
      if (!seen.has(parent)) {
        seen.add(parent);
        pending.push(parent);
      }
    }
  }
  return found;
}

function objectReader(fs: ReturnType<typeof privateFs>, gitdir: string, cache: object): GitObjectReader {
  return {
    async read(oid): Promise<GitRawObject | undefined> {
      try {
        const object = await readObject({ fs, gitdir, oid, format: 'content', cache });
        if (!(object.object instanceof Uint8Array)) return undefined;
        return { type: object.type as GitObjectType, content: object.object };
      } catch (error) {
        if ((error as { code?: unknown }).code === 'NotFoundError') return undefined;
        throw error;
      }
    },
  };
}

/**
 * isomorphic-git's errors become ours. Only the status and the error's code are kept in
 * the message; the original stays as the cause (scrubbed of credentials by the caller).
 */
function translateError(error: unknown, url: string): unknown {
  if (error instanceof GitError) return error;
  const { code, data } = error as { code?: unknown; data?: { statusCode?: unknown } };
  if (code === 'HttpError' && typeof data?.statusCode === 'number') {
    const status = data.statusCode;
    if (status === 401 || status === 403) return new GitAuthFailedError(url, status, error);
    if (status === 404) return new GitRepositoryNotFoundError(url, error);
    return new GitTransportError(url, `HTTP ${status}`, status, error);
  }
  if (code === 'SmartHttpError')
    return new GitTransportError(url, 'the server did not answer as a git smart HTTP server', undefined, error);
  if (code === 'RemoteCapabilityError')
    return new GitTransportError(url, 'the server cannot make a shallow fetch', undefined, error);
  const reason = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown error';
  return new GitTransportError(url, reason, undefined, error);
}
