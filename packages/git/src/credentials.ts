import { GitInvalidArgumentError, quote } from './errors.js';

/**
 * Where credentials come from: called once per operation with the normalized URL, it
 * returns HTTP headers to send with every request of that operation (e.g.
 * `{ Authorization: 'Bearer …' }` or `Basic …`), or undefined for an anonymous request.
 */
export type GitAuth = (
  url: string,
) => Promise<Record<string, string> | undefined> | Record<string, string> | undefined;

// Set by the engine for the protocol itself; a caller's value would break the exchange.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'git-protocol', 'transfer-encoding']);
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
 * Every string that must never appear in an error: each header value, each of its words
 * after the scheme (the token of `Bearer <token>`), and for Basic the decoded
 * `user:password` and the password. A server echoing any of them back is caught too.
 * Fragments under 4 characters are not listed: redacting them would garble messages and
 * they are not credentials on their own.
 */
export function secretsOf(headers: Readonly<Record<string, string>>): string[] {
  const secrets = new Set<string>();
  for (const value of Object.values(headers)) {
    secrets.add(value);
    const words = value.trim().split(/\s+/);
    for (const word of words.slice(1)) secrets.add(word);
    if (words.length === 2 && words[0]?.toLowerCase() === 'basic' && words[1]) {
      const decoded = Buffer.from(words[1], 'base64').toString('utf8');
      secrets.add(decoded);
      const colon = decoded.indexOf(':');
      if (colon >= 0) secrets.add(decoded.slice(colon + 1));
    }
  }
  return [...secrets].filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}
