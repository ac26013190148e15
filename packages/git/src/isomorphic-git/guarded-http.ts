import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { untilAborted } from '../abort.js';

const MAX_REDIRECTS = 10;

export interface GuardOptions {
  signal: AbortSignal | undefined;
  /** Names of the headers that carry credentials (all headers from `auth`). */
  credentials: readonly string[];
  /**
   * The most bytes a response body may have. The read that passes it calls `onOverflow`
   * (which should abort `signal`) and fails, so nothing past the cap is handed on.
   */
  maxBodyBytes?: number;
  onOverflow?: (max: number) => void;
  /** false: a redirect is returned as it came, for the caller to refuse. Default true. */
  followRedirects?: boolean;
}

/**
 * The HTTP client isomorphic-git gets, wrapped for two guarantees it does not give itself:
 *
 * - Abort: isomorphic-git's fetch and listServerRefs take no AbortSignal, so the signal goes
 *   in here. Every request carries it (the node client hands it to http.request, which
 *   closes the socket), and a pending request or body read rejects the moment it fires.
 *   The body matters: the node client's stream iterator never settles a read that was not
 *   pending when the stream died, which would hang the fetch.
 * - Credentials stay with their origin: redirects are followed here, not by the client,
 *   and every header from `auth` is dropped when a redirect leaves the origin (scheme, host,
 *   port) the URL was given for. The node client drops only `Authorization` and `Cookie`,
 *   and a token may travel in any header (`Private-Token`, …).
 */
export function guardedHttp(client: HttpClient, options: GuardOptions): HttpClient {
  const { signal } = options;
  const credentials = new Set(options.credentials.map((name) => name.toLowerCase()));
  return {
    async request(first) {
      let request: GitHttpRequest = first;
      for (let redirects = 0; ; redirects += 1) {
        signal?.throwIfAborted();
        const response = await untilAborted(
          client.request({
            ...request,
            ...(signal ? { signal } : {}),
            fetchOptions: { ...(request.fetchOptions as object | undefined), followRedirects: false },
          }),
          signal,
        );
        const location = headerOf(response, 'location');
        const final =
          response.statusCode < 300 || response.statusCode >= 400 || response.statusCode === 304 || !location;
        if (final || options.followRedirects === false) {
          if (!response.body) return response;
          const body =
            options.maxBodyBytes === undefined
              ? response.body
              : boundedBody(response.body, options.maxBodyBytes, options.onOverflow);
          return { ...response, body: signal ? abortableBody(body, signal) : body };
        }
        // The redirect's own body is not needed; dropping it closes the stream.
        await Promise.resolve(response.body?.return?.()).catch(() => undefined);
        if (redirects >= MAX_REDIRECTS)
          throw Object.assign(new Error('too many redirects'), { code: 'TOO_MANY_REDIRECTS' });
        request = redirected(request, response.statusCode, location, credentials);
      }
    },
  };
}

function redirected(
  previous: GitHttpRequest,
  status: number,
  location: string,
  credentials: ReadonlySet<string>,
): GitHttpRequest {
  const url = new URL(location, previous.url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw Object.assign(new Error('redirect to a scheme other than http(s)'), { code: 'BAD_REDIRECT' });
  }
  const sameOrigin = url.origin === new URL(previous.url).origin;
  // As curl and RFC 9110 §15.4: a 303 always, and a 301/302 of a POST, become a body-less GET.
  const toGet = status === 303 || ((status === 301 || status === 302) && previous.method?.toUpperCase() === 'POST');
  const dropped = new Set(['host', ...(toGet ? ['content-length', 'content-type'] : [])]);
  if (!sameOrigin) for (const name of ['authorization', 'cookie', ...credentials]) dropped.add(name);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(previous.headers ?? {})) {
    if (!dropped.has(name.toLowerCase())) headers[name] = value;
  }
  const next: GitHttpRequest = { ...previous, url: url.href, headers };
  if (toGet) {
    next.method = 'GET';
    delete next.body;
  }
  return next;
}

function headerOf(response: GitHttpResponse, name: string): string | undefined {
  for (const [key, value] of Object.entries(response.headers ?? {})) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * The body, counted as it arrives: the chunk that would pass `max` is never handed on. The
 * stream is dropped (closing the connection), so the server's pack stops where the cap is.
 */
function boundedBody(
  body: AsyncIterableIterator<Uint8Array>,
  max: number,
  onOverflow: ((max: number) => void) | undefined,
): AsyncIterableIterator<Uint8Array> {
  let received = 0;
  const iterator: AsyncIterableIterator<Uint8Array> = {
    async next() {
      const step = await body.next();
      if (step.done) return step;
      received += step.value.length;
      if (received > max) {
        void Promise.resolve(body.return?.()).catch(() => undefined);
        onOverflow?.(max);
        throw Object.assign(new Error(`response body larger than ${max} bytes`), { code: 'BODY_TOO_LARGE' });
      }
      return step;
    },
    async return() {
      await Promise.resolve(body.return?.()).catch(() => undefined);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

function abortableBody(
  body: AsyncIterableIterator<Uint8Array>,
  signal: AbortSignal,
): AsyncIterableIterator<Uint8Array> {
  const iterator: AsyncIterableIterator<Uint8Array> = {
    async next() {
      try {
        return await untilAborted(body.next(), signal);
      } catch (error) {
        // Dropping the stream closes the connection instead of leaving it to the GC.
        if (signal.aborted) void Promise.resolve(body.return?.()).catch(() => undefined);
        throw error;
      }
    },
    async return() {
      await Promise.resolve(body.return?.()).catch(() => undefined);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
