import type { FindingCodeInfo } from '../findings.js';

/**
 * The finding codes of secrets found in package data. Like the credential-header codes, the
 * same finding has two codes: building refuses to ship it (an error, the server is left out),
 * while a client reading a package cannot tell a secret from a public value and still loads
 * the entry (a warning: treat the value as leaked).
 */
export const SECRET_FINDING_CODES = Object.freeze({
  'secret.embedded-rejected': {
    rule: 'AR9O2',
    severity: 'error',
    text:
      'A value looks like a credential: a known token format, a password in a URL, a literal under a credential-like name, or a ' +
      'random-looking string. env and headers are visible package data and plugins must not embed secrets in them (§7.2.1, §9.2); ' +
      'args and url are package data too. The server is not packaged. Let the client supply the secret (its own configuration or ' +
      'authorization flow), or use a placeholder such as changeme in a template.',
  },
  'secret.embedded': {
    rule: 'AR9O2',
    severity: 'warning',
    text:
      'A value looks like a credential: a known token format, a password in a URL, a literal under a credential-like name, or a ' +
      'random-looking string. Plugins must not embed secrets in env or headers (§7.2.1, §9.2). A client cannot tell a secret from a ' +
      'public value and still loads the server; treat the value as leaked and revoke it.',
  },
} as const satisfies Record<string, FindingCodeInfo>);
