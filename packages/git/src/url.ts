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
 * - plain http only to loopback hosts unless `allowInsecureHttp`: headers carry credentials;
 * - when the engine speaks `ssh:`, `ssh://[user@]host[:port]/path` (normalized) and git's
 *   scp-like `[user@]host:path` (returned as written) are accepted: a user name, never a
 *   password; no host, user or URL starting with `-`, which ssh would take for an option.
 *
 * - git's remote-helper syntax `<transport>::<address>` is refused first, whatever the
 *   transport: git would run `git-remote-<transport>` (`ext::` runs a command, `fd::` talks
 *   to a descriptor, `file::` reads this machine's disk). Only the forms above ever reach
 *   an engine, so no process is started for anything else;
 * - an http(s) path with a `\`, an encoded `/` or `\` (`%2f`, `%5c`), or a segment that is
 *   or decodes to `.` or `..`, is refused: servers decode the path, so `/team/..%2fother/x`
 *   names a repository outside `/team` while every prefix check on the text says it is
 *   inside (a vault's scope, say).
 *
 * The rules apply in this order, and nothing of the URL is echoed before the userinfo is
 * masked, so a refused URL never puts its secret into an error.
 */
export function normalizeRemoteUrl(raw: string, options: RemoteUrlOptions = {}): string {
  if (typeof raw !== 'string' || raw === '') throw new GitInvalidUrlError(String(raw), 'empty or not a string');
  const shown = maskUrl(raw);
  const helper = remoteHelperOf(raw);
  if (helper !== undefined)
    throw new GitUnsupportedUrlError(shown, `${helper}:: (a git remote helper)`, options.engine ?? 'isomorphic-git');
  // Whitespace and control characters are either typos or attempts to smuggle a second value.
  if (/[\u0000-\u0020\u007f]/.test(raw))
    throw new GitInvalidUrlError(shown, 'contains whitespace or control characters');
  // Anything starting with `-` would be read as an option by git or ssh (`-oProxyCommand=…`).
  if (raw.startsWith('-')) throw new GitInvalidUrlError(shown, 'starts with -');
  const engine = options.engine ?? 'isomorphic-git';
  const protocols = options.protocols ?? DEFAULT_PROTOCOLS;
  if (!raw.includes('://')) {
    if (/^[^/:]+:/.test(raw) && !/^[a-z]:[\\/]/i.test(raw)) {
      // `git@github.com:org/repo.git`: git's scp-like SSH syntax.
      if (!protocols.includes('ssh:')) throw new GitUnsupportedUrlError(shown, 'ssh (scp-like address)', engine);
      return checkScpLike(raw, shown);
    }
    throw new GitInvalidUrlError(shown, 'not an absolute URL');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GitInvalidUrlError(shown, 'cannot be parsed');
  }
  if (!protocols.includes(url.protocol)) throw new GitUnsupportedUrlError(shown, url.protocol, engine);
  if (url.protocol === 'ssh:') return normalizeSshUrl(raw, url, shown);
  if (url.username !== '' || url.password !== '' || hasUserinfo(raw)) throw new GitUrlHasCredentialsError(shown);
  if (raw.includes('?') || raw.includes('#')) throw new GitInvalidUrlError(shown, 'a query or fragment is not allowed');
  if (url.hostname === '') throw new GitInvalidUrlError(shown, 'no host');
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '') throw new GitInvalidUrlError(shown, 'no repository path');
  const encoded = encodedPathProblem(raw.slice(authorityEnd(raw, raw.indexOf('://') + 3)));
  if (encoded !== undefined) throw new GitInvalidUrlError(shown, encoded);
  if (url.protocol === 'http:' && !options.allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new GitInsecureUrlError(shown);
  }
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * The transport of git's `<transport>::<address>` syntax, exactly as git finds it
 * (transport.c: a run of `[A-Za-z0-9][A-Za-z0-9+.-]*`, possibly empty, then `::`), or
 * undefined. Checked on the raw text before anything else, since git checks it first too.
 * Exported so that parsers of larger strings holding an address (a skill's git string)
 * apply the very same rule before their own.
 */
export function remoteHelperOf(raw: string): string | undefined {
  return /^((?:[A-Za-z0-9][A-Za-z0-9+.-]*)?)::/.exec(raw)?.[1];
}

/**
 * Why an http(s) path (as written, before the URL parser resolves anything) would name another
 * repository once a server decodes it, or undefined. Each segment is decoded once: no `/`,
 * `\\`, NUL or control character may come out of an escape, nor an escape of one for a
 * server that decodes twice (`%252f`), and no segment may become `.` or `..` (or `%2e%2e`).
 */
function encodedPathProblem(path: string): string | undefined {
  // The URL parser would resolve these itself, so the repository reached would not be the one written.
  if (path.includes('\\')) return 'the path has a backslash';
  for (const segment of path.split('/')) {
    if (segment === '.' || segment === '..') return 'the path has a . or .. segment';
    if (!segment.includes('%')) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return 'the path has a malformed percent escape';
    }
    if (/[/\\\u0000-\u001f\u007f]|%(?:2f|5c|00)/i.test(decoded))
      return 'the path has an encoded /, \\ or control character (%2f, %5c)';
    if (/^(?:\.|%2e){1,2}$/i.test(decoded)) return 'the path has an encoded . or .. segment';
  }
  return undefined;
}

// A user name for SSH: what account names are made of. Nothing that a shell, ssh's option
// parser or git's URL parser would read differently (no `:`, `@`, `%`, quotes, leading `-`).
const SSH_USER = /^[A-Za-z0-9._~][A-Za-z0-9._~-]*$/;
// A DNS name or IPv4 address, or an IPv6 address in brackets; never starting with `-`.
const SSH_HOST = /^(?:[A-Za-z0-9_][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\])$/;

/**
 * `ssh://[user@]host[:port]/path`. A user name is part of the address (`git@github.com`),
 * not a secret; a password is, and ssh never takes one from a URL anyway. The path is
 * kept as written: the URL parser would resolve `..` or re-encode characters, and then
 * the repository asked for would not be the one named.
 */
function normalizeSshUrl(raw: string, url: URL, shown: string): string {
  const start = raw.indexOf('://') + 3;
  const end = authorityEnd(raw, start);
  const authority = raw.slice(start, end);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? undefined : authority.slice(0, at);
  if (userinfo !== undefined && (userinfo.includes(':') || url.password !== ''))
    throw new GitUrlHasCredentialsError(shown);
  if (raw.includes('?') || raw.includes('#')) throw new GitInvalidUrlError(shown, 'a query or fragment is not allowed');
  if (userinfo !== undefined && !SSH_USER.test(userinfo))
    throw new GitInvalidUrlError(shown, 'the user name is not a plain account name');
  const hostPort = at < 0 ? authority : authority.slice(at + 1);
  const port = /:(\d*)$/.exec(hostPort);
  const host = port ? hostPort.slice(0, port.index) : hostPort;
  if (host === '') throw new GitInvalidUrlError(shown, 'no host');
  if (!SSH_HOST.test(host)) throw new GitInvalidUrlError(shown, 'the host is not a plain host name or address');
  if (port && !/^\d{1,5}$/.test(port[1] ?? '')) throw new GitInvalidUrlError(shown, 'the port is not a number');
  const path = checkRepoPath(raw.slice(end), shown);
  const user = userinfo === undefined ? '' : `${userinfo}@`;
  return `ssh://${user}${host.toLowerCase()}${port ? `:${port[1]}` : ''}${path}`;
}

/**
 * `[user@]host:path`, git's scp-like form, returned unchanged once checked: the same rules
 * for user and host as `ssh://`, and a path that holds no `@` (`alice:secret@host/x` would
 * otherwise read as host `alice` and path `secret@host/x`, carrying the password along).
 */
function checkScpLike(raw: string, shown: string): string {
  // `[::1]:path`: the host's colon is the one after the closing bracket, as git reads it.
  const at0 = raw.indexOf('@');
  const hostStart = at0 >= 0 && at0 < raw.indexOf(':') ? at0 + 1 : 0;
  const close = raw[hostStart] === '[' ? raw.indexOf(']:', hostStart) : -1;
  const colon = close >= 0 ? close + 1 : raw.indexOf(':');
  const authority = raw.slice(0, colon);
  const at = authority.lastIndexOf('@');
  const user = at < 0 ? undefined : authority.slice(0, at);
  const host = at < 0 ? authority : authority.slice(at + 1);
  const path = raw.slice(colon + 1);
  if (path.includes('@')) throw new GitInvalidUrlError(shown, 'looks like credentials before the host');
  if (raw.includes('?') || raw.includes('#')) throw new GitInvalidUrlError(shown, 'a query or fragment is not allowed');
  if (user !== undefined && !SSH_USER.test(user))
    throw new GitInvalidUrlError(shown, 'the user name is not a plain account name');
  if (host === '') throw new GitInvalidUrlError(shown, 'no host');
  if (!SSH_HOST.test(host)) throw new GitInvalidUrlError(shown, 'the host is not a plain host name or address');
  if (path.replace(/\/+$/, '') === '') throw new GitInvalidUrlError(shown, 'no repository path');
  checkRepoPath(path.startsWith('/') ? path : `/${path}`, shown);
  return raw;
}

/** The repository path of an SSH address, without trailing slashes; `.` and `..` segments are refused. */
function checkRepoPath(path: string, shown: string): string {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '/') throw new GitInvalidUrlError(shown, 'no repository path');
  if (trimmed.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new GitInvalidUrlError(shown, 'the path has a . or .. segment');
  }
  if (/["'\\`$]/.test(trimmed)) throw new GitInvalidUrlError(shown, 'the path has quotes, backslashes or $');
  return trimmed;
}

/** `localhost`, `127.0.0.0/8` and `[::1]`: traffic that never leaves the machine. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The URL as it may appear in a message: userinfo replaced by `***`, query and fragment
 * dropped. Strings that do not parse are echoed too, so for them everything up to the
 * last `@` is masked: an unencoded `/` in a password would otherwise end the authority
 * early and leave the rest of the password in view.
 */
export function maskUrl(raw: string): string {
  // Called on error paths with whatever a declaration held: a value that is not a string is
  // shown as its type, so the error being reported is not replaced by a TypeError here.
  if (typeof raw !== 'string') return `(${raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw})`;
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
