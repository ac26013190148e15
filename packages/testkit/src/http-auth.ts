import { timingSafeEqual } from 'node:crypto';

/**
 * Who may use a server: one fixed account, or a predicate for tests that need several
 * accounts or want to count attempts.
 */
export type BasicAuth = { username: string; password: string } | ((username: string, password: string) => boolean);

export interface BasicCredential {
  username: string;
  password: string;
}

/** The value of an `Authorization: Basic …` header for a credential, for clients in tests. */
export function basicAuthorizationHeader(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** Decodes `Authorization: Basic base64(user:pass)`; anything else yields undefined. */
export function parseBasicAuthorization(header: string | undefined): BasicCredential | undefined {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  // The password may contain ':'; the user name may not (RFC 7617).
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The credential in `header` if `auth` accepts it, otherwise undefined. */
export function acceptedCredential(auth: BasicAuth, header: string | undefined): BasicCredential | undefined {
  const credential = parseBasicAuthorization(header);
  if (!credential) return undefined;
  const ok =
    typeof auth === 'function'
      ? auth(credential.username, credential.password)
      : sameText(credential.username, auth.username) && sameText(credential.password, auth.password);
  return ok ? credential : undefined;
}

// Constant-time so the helper is safe to copy into something that is not a test.
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
