import {
  GitInsecureUrlError,
  GitInvalidUrlError,
  GitUnsupportedUrlError,
  GitUrlHasCredentialsError,
} from './errors.js';

export interface RemoteUrlOptions {
  /** Schemes the engine speaks, with the colon: `['https:', 'http:']` by default. */
  protocols?: readonly string[];
  /** Name of the engine, for messages. */
  engine?: string;
  /** Allow plain `http:` to any host; by default only loopback hosts may use it. */
  allowInsecureHttp?: boolean;
}

const DEFAULT_PROTOCOLS = ['https:', 'http:'] as const;

/**
 * Checks a remote URL and returns it in the one form every engine receives:
 * `scheme://host[:port]/path`, without a trailing slash. Pure; throws a typed error.
 *
 * - credentials in the URL are refused (they would end up in logs, process lists and
 *   error messages); they go through the `auth` option as headers;
 * - a query or fragment is refused too: smart HTTP appends `/info/refs?service=…` to the
 *   URL, and a `?token=…` would be a credential in the URL by another name;
 * - plain http only to loopback hosts unless `allowInsecureHttp`: headers carry credentials.
 *
 * The rules apply in this order, and nothing of the URL is echoed before the userinfo is
 * masked, so a refused URL never puts its secret into an error.
 */
export function normalizeRemoteUrl(raw: string, options: RemoteUrlOptions = {}): string {
  if (typeof raw !== 'string' || raw === '') throw new GitInvalidUrlError(String(raw), 'empty or not a string');
  const shown = maskUrl(raw);
  // Whitespace and control characters are either typos or attempts to smuggle a second value.
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw new GitInvalidUrlError(shown, 'contains whitespace or control characters');
  const engine = options.engine ?? 'isomorphic-git';
  if (!raw.includes('://')) {
    if (/^[^/:]+:/.test(raw) && !/^[a-z]:[\\/]/i.test(raw)) {
      // `git@github.com:org/repo.git`: git's scp-like SSH syntax.
      throw new GitUnsupportedUrlError(shown, 'ssh (scp-like address)', engine);
    }
    throw new GitInvalidUrlError(shown, 'not an absolute URL');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GitInvalidUrlError(shown, 'cannot be parsed');
  }
  const protocols = options.protocols ?? DEFAULT_PROTOCOLS;
  if (!protocols.includes(url.protocol)) throw new GitUnsupportedUrlError(shown, url.protocol, engine);
  if (url.username !== '' || url.password !== '' || hasUserinfo(raw)) throw new GitUrlHasCredentialsError(shown);
  if (raw.includes('?') || raw.includes('#')) throw new GitInvalidUrlError(shown, 'a query or fragment is not allowed');
  if (url.hostname === '') throw new GitInvalidUrlError(shown, 'no host');
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '') throw new GitInvalidUrlError(shown, 'no repository path');
  if (url.protocol === 'http:' && !options.allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new GitInsecureUrlError(shown);
  }
  return `${url.protocol}//${url.host}${path}`;
}

/** `localhost`, `127.0.0.0/8` and `[::1]`: traffic that never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The URL as it may appear in a message: userinfo replaced by `***`, query and fragment
 * dropped. Strings that do not parse are echoed too, so for them everything up to the
 * last `@` is masked: an unencoded `/` in a password would otherwise end the authority
 * early and leave the rest of the password in view.
 */
export function maskUrl(raw: string): string {
  const cut = raw.split(/[?#]/, 1)[0] ?? '';
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(cut);
  const start = scheme ? scheme[0].length : 0;
  const at = parses(cut) ? cut.lastIndexOf('@', authorityEnd(cut, start) - 1) : cut.lastIndexOf('@');
  const masked = at >= start ? `${cut.slice(0, start)}***${cut.slice(at)}` : cut;
  return masked.length > 300 ? `${masked.slice(0, 300)}…` : masked;
}

/** Userinfo present, even empty (`https://@host/…`): the authority of a parseable URL holds an `@`. */
function hasUserinfo(raw: string): boolean {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(raw);
  const start = scheme ? scheme[0].length : 0;
  return raw.slice(start, authorityEnd(raw, start)).includes('@');
}

function authorityEnd(text: string, start: number): number {
  const end = text.slice(start).search(/[/?#]/);
  return end < 0 ? text.length : start + end;
}

function parses(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}
