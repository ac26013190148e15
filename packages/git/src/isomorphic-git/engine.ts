import { fetch as fetchPack, init, listServerRefs, readObject, setConfig } from 'isomorphic-git';
import type { HttpClient } from 'isomorphic-git';
import { request as nodeRequest } from 'isomorphic-git/http/node';
import type { GitEngine, GitObjectReader, GitObjectType, GitRawObject } from '../engine.js';
import { GitAuthFailedError, GitError, GitRepositoryNotFoundError, GitTransportError } from '../errors.js';
import type { RemoteRef } from '../remote-refs.js';
import { guardedHttp } from './guarded-http.js';
import { privateFs } from './private-fs.js';

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

    async fetchCommit({ url, headers, signal, commit, gitdir }) {
      const fs = privateFs(gitdir, signal);
      const cache = {};
      try {
        await init({ fs, gitdir, bare: true, defaultBranch: 'main' });
        // fetch insists on a refspec for the remote; the commit id matches none, so no ref is written.
        await setConfig({ fs, gitdir, path: 'remote.origin.fetch', value: '+refs/heads/*:refs/remotes/origin/*' });
        await fetchPack({
          fs,
          cache,
          http: guardedHttp(client, { signal, credentials: Object.keys(headers) }),
          gitdir,
          url,
          ref: commit,
          remoteRef: commit,
          singleBranch: true,
          depth: 1,
          tags: false,
          headers: { ...headers },
        });
      } catch (error) {
        throw translateError(error, url);
      }
      return objectReader(fs, gitdir, cache);
    },
  };
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
  if (code === 'SmartHttpError') return new GitTransportError(url, 'the server did not answer as a git smart HTTP server', undefined, error);
  if (code === 'RemoteCapabilityError') return new GitTransportError(url, 'the server cannot make a shallow fetch', undefined, error);
  const reason = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown error';
  return new GitTransportError(url, reason, undefined, error);
}
