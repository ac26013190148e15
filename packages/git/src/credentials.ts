import { GitInvalidArgumentError, quote } from './errors.js';

/**
 * Where credentials come from: called once per operation with the normalized URL, it
 * returns HTTP headers to send with every request of that operation (e.g.
 * `{ Authorization: 'Bearer …' }` or `Basic …`), or undefined for an anonymous request.
 */
export type GitAuth = (url: string) => Promise<Record<string, string> | undefined> | Record<string, string> | undefined;

// Set by the engine for the protocol itself; a caller's value would break the exchange.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'git-protocol',
  'transfer-encoding',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The headers `auth` returns for `url`, checked. A bad header is reported by name only:
 * its value is a credential.
 */
export async function authHeaders(auth: GitAuth | undefined, url: string): Promise<Record<string, string>> {
  if (auth === undefined) return {};
  if (typeof auth !== 'function') throw new GitInvalidArgumentError('auth', 'must be a function (url) => headers');
  const headers = await auth(url);
  if (headers === undefined) return {};
  if (headers === null || typeof headers !== 'object') {
    throw new GitInvalidArgumentError('auth', 'must return an object of HTTP headers or undefined');
  }
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new GitInvalidArgumentError('auth', `header name ${quote(name)} is not an HTTP token`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new GitInvalidArgumentError('auth', `header ${name} is set by the git protocol itself`);
    }
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      throw new GitInvalidArgumentError('auth', `header ${name} must be a string without CR, LF or NUL`);
    }
    checked[name] = value;
  }
  return checked;
}

/**
 * Every string that must never appear in an error. The parts of a credential: each header
 * value, each of its words after the scheme (the token of `Bearer <token>`), and for
 * Basic the decoded `user:password`, the password *and the user name* (many hosts take a
 * token as the user name, `https://<token>@host`, with any password or none). Then every
 * form in which a server may echo a part back (see echoForms): as written, percent-encoded,
 * form-encoded, base64 (standard and URL-safe, padded or not), JSON-escaped. A server
 * echoing any of them is caught too. Parts under 4 characters are not listed: redacting
 * them would garble messages and they are not credentials on their own.
 */
export function secretsOf(headers: Readonly<Record<string, string>>): string[] {
  const parts = new Set<string>();
  for (const value of Object.values(headers)) {
    parts.add(value);
    const words = value.trim().split(/\s+/);
    for (const word of words.slice(1)) parts.add(word);
    if (words.length === 2 && words[0]?.toLowerCase() === 'basic' && words[1]) {
      const decoded = Buffer.from(words[1], 'base64').toString('utf8');
      parts.add(decoded);
      const colon = decoded.indexOf(':');
      if (colon >= 0) {
        parts.add(decoded.slice(0, colon));
        parts.add(decoded.slice(colon + 1));
      }
    }
  }
  const secrets = new Set<string>();
  for (const part of parts) {
    if (part.length < 4) continue;
    for (const form of echoForms(part)) if (form.length >= 4) secrets.add(form);
  }
  // Longest first: a form that contains another (padded base64, user:password) is replaced whole.
  return [...secrets].sort((a, b) => b.length - a.length);
}

/**
 * The spellings a server, proxy or library may give a secret when it echoes it: in a URL
 * (`https://user:p%40ss@…`, with upper- or lower-case hex, `!'()*` escaped or not), in a
 * form body (`+` for a space), as base64 on its own (a server decoding and re-encoding a
 * Basic password, or a header value), standard or URL-safe, padded or not, and inside a
 * JSON string.
 */
function echoForms(secret: string): string[] {
  const base64 = Buffer.from(secret, 'utf8').toString('base64');
  const unpadded = base64.replace(/=+$/, '');
  const urlSafe = unpadded.replace(/\+/g, '-').replace(/\//g, '_');
  const percent = encodeURIComponent(secret);
  const strict = percent.replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
  const lower = (text: string) => text.replace(/%[0-9A-F]{2}/g, (sequence) => sequence.toLowerCase());
  const json = JSON.stringify(secret).slice(1, -1);
  return [
    secret,
    base64,
    unpadded,
    urlSafe,
    percent,
    lower(percent),
    strict,
    lower(strict),
    percent.replace(/%20/g, '+'),
    json,
  ];
}
