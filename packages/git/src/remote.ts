import type { HttpClient } from 'isomorphic-git';
import type { GitAuth } from './credentials.js';
import type { GitEngine } from './engine.js';
import { GitAbortedError, GitError, GitInvalidArgumentError, GitTransportError } from './errors.js';
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
export function engineError(error: unknown, url: string): unknown {
  if (error instanceof GitError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  const reason = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown error';
  return new GitTransportError(url, reason, undefined, error);
}

/**
 * The error an operation rejects with: GitAbortedError once the signal has fired, whatever
 * else went wrong meanwhile; and never holding a header value of the request.
 */
export function finalError(error: unknown, operation: string, signal: AbortSignal | undefined, secrets: readonly string[]): unknown {
  const final = signal?.aborted && !(error instanceof GitAbortedError) ? new GitAbortedError(operation, signal.reason) : error;
  return scrubError(final, secrets);
}
