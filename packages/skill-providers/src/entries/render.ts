/**
 * How entries appear in messages. Anything that may hold a secret is replaced by `***`
 * before a character of the entry is shown, and every rendering is bounded in length.
 *
 * | Shape                                    | Shown as                                   |
 * |------------------------------------------|--------------------------------------------|
 * | `scheme://user:pass@host/…`, `…token@…`   | `scheme://***@host/…`                      |
 * | `ssh://git@host/…` (a plain login name)  | as written                                 |
 * | `scheme://` + an authority that is not   | `scheme://***` up to the last `@` of the   |
 * |   `host[:port]` (a password with `/`…)   |   text, or the authority when there is none |
 * | `name:secret@host/…` (see readsAsPassword) | `name:***@…` up to the last `@`          |
 * | `file:///path…` (no authority), a path    | as written: a path holds no credential     |
 * |   starting `/`, `./`, `../`, `~/`         |                                            |
 * | anything else with an `@` but no form    | `***` up to the last `@`                   |
 * | a query `?…`                             | `?***` (up to a `#`)                       |
 */

const URL_PREFIX = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?';
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const HOST_IPV6 = /^\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\]$/;
/** A login name: no `:` (that would be a password) and no leading `-` (an ssh option). */
export const SSH_USER = /^[A-Za-z0-9._][A-Za-z0-9._-]*$/;

const MAX_SHOWN = 160;

/** `scheme://`, its scheme and where the authority ends (the first `/`, `?` or `#`), or undefined. */
export function splitUrlPrefix(text: string): { scheme: string; start: number; end: number } | undefined {
  const match = URL_PREFIX.exec(text);
  if (!match) return undefined;
  const start = match[0].length;
  const rest = text.slice(start).search(/[/?#]/);
  return { scheme: match[1]!.toLowerCase(), start, end: rest < 0 ? text.length : start + rest };
}

/** `host[:port]` with a port in 1–65535, a host name (ASCII labels) or a bracketed IPv6 address. */
export function splitHostPort(text: string): { host: string; port: number | undefined } | undefined {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::([0-9]{1,5}))?$/.exec(text);
  if (!match) return undefined;
  const host = match[1]!;
  if (!HOST_NAME.test(host) && !HOST_IPV6.test(host)) return undefined;
  if (match[2] === undefined) return { host, port: undefined };
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/**
 * The scp-like form `[user@]host:rest`: no `scheme://`, and a `:` before the first `/`.
 * The user is whatever precedes the last `@` in front of the host's `:`. Undefined for
 * other shapes. Host and user are not checked here.
 */
export function splitScp(
  text: string,
): { user: string | undefined; host: string; rest: string; restStart: number } | undefined {
  if (URL_PREFIX.test(text)) return undefined;
  const slash = text.indexOf('/');
  const head = slash < 0 ? text : text.slice(0, slash);
  const firstColon = head.indexOf(':');
  if (firstColon < 0) return undefined;
  const at = head.lastIndexOf('@', firstColon);
  const user = at >= 0 ? head.slice(0, at) : undefined;
  const hostStart = at + 1;
  let hostEnd = head.indexOf(':', hostStart);
  if (head[hostStart] === '[') {
    const close = head.indexOf(']', hostStart);
    if (close >= 0 && head[close + 1] === ':') hostEnd = close + 1;
  }
  return { user, host: text.slice(hostStart, hostEnd), rest: text.slice(hostEnd + 1), restStart: hostEnd + 1 };
}

/**
 * `alice:S3CRET@github.com/org/skills.git` has the scp shape (host `alice`, path `S3CRET`,
 * ref `github.com/org/skills.git`), but it is what a URL with a password looks like without
 * its scheme. An scp-like address without a user whose path, up to its first `@`, has neither
 * a `/` nor a `.git` suffix is taken for that and refused; a repository in the home folder
 * of a host without a user is written `host:skills.git` or `host:./skills`.
 */
export function readsAsPassword(scp: { user: string | undefined; rest: string }): boolean {
  const at = scp.rest.indexOf('@');
  if (scp.user !== undefined || at < 0) return false;
  const before = scp.rest.slice(0, at);
  return before !== '' && !before.includes('/') && !/\.git$/i.test(before);
}

/** The text with every part that may be a secret replaced by `***` (see the table above). Not length-limited. */
export function maskText(text: string): string {
  let out = text;
  const url = splitUrlPrefix(text);
  // `file:///…` has no authority, so no userinfo; a local path is a place on this machine.
  // Neither holds a credential: they are shown as written (an `@` there is a ref or a name).
  if ((url?.scheme === 'file' && url.start === url.end) || (!url && /^(?:\/|\.\.?\/|~\/)/.test(text))) return text;
  if (url) {
    const authority = text.slice(url.start, url.end);
    const at = authority.lastIndexOf('@');
    if (!splitHostPort(authority.slice(at + 1))) {
      // The authority does not parse: a password with a `/`, `?` or `#` may run past it.
      const last = text.lastIndexOf('@');
      out = `${text.slice(0, url.start)}***${last >= url.start ? text.slice(last) : text.slice(url.end)}`;
    } else if (at >= 0 && !(url.scheme === 'ssh' && SSH_USER.test(authority.slice(0, at)))) {
      out = `${text.slice(0, url.start)}***${text.slice(url.start + at)}`;
    }
  } else {
    const scp = splitScp(text);
    if (scp) {
      if (scp.user !== undefined && !SSH_USER.test(scp.user)) {
        out = `***${text.slice(scp.user.length)}`;
      } else if (readsAsPassword(scp)) {
        out = `${text.slice(0, scp.restStart)}***${text.slice(text.lastIndexOf('@'))}`;
      }
    } else {
      const last = text.lastIndexOf('@');
      if (last >= 0) out = `***${text.slice(last)}`;
    }
  }
  return out.replace(/\?[^#]*/, '?***');
}

/** A string for a message: cut to a bounded length, then quoted so control characters show as escapes. */
export function quote(text: string, max = MAX_SHOWN): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

/** A source or git string for a message: masked, then quoted. */
export function showSource(text: string): string {
  return quote(maskText(text));
}

/** The kind of a value for a message: `null`, `an array`, `a number`… */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : type === 'undefined' ? 'undefined' : `a ${type}`;
}

const SHOWN_FIELDS = ['provider', 'source', 'version', 'path', 'name'] as const;

/**
 * An entry for a message. A string is masked and quoted; an object shows its string fields
 * (the source masked, each one cut short) and hides its config, which may hold anything.
 */
export function renderEntry(entry: unknown): string {
  if (typeof entry === 'string') return showSource(entry);
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `(${kindOf(entry)})`;
  const record = entry as Record<string, unknown>;
  const parts: string[] = [];
  let others = 0;
  for (const key of Object.keys(record)) {
    if (!(SHOWN_FIELDS as readonly string[]).includes(key)) others += 1;
  }
  for (const key of SHOWN_FIELDS) {
    if (!Object.hasOwn(record, key)) continue;
    const value = record[key];
    const shown =
      typeof value !== 'string' ? `(${kindOf(value)})` : key === 'source' ? showSource(value) : quote(value, 64);
    parts.push(`${key}: ${shown}`);
  }
  if (others > 0) parts.push('…');
  return `{ ${parts.join(', ')} }`;
}
