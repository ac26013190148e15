import { SkillError } from '@agentproto/skill-providers';

// Codes shared with the core (SKILL_AUTH_FAILED, SKILL_NOT_FOUND, SKILL_CONTENT_MISMATCH,
// SKILL_UNSAFE_TREE) are used where the failure means the same thing as for the built-in
// providers, so a host branches on one code whatever the provider. prepareSkills keeps a
// SkillError's code when it wraps it with the entry and the phase.
//
// No message here is ever built from a credential: only the URL (which validate proved
// has no userinfo and no query), statuses, secret names and archive entry names.

/** The server refused the request: 401 or 403, with or without a token. */
export class TarballAuthError extends SkillError {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly tokenSecretName: string | undefined,
  ) {
    super(
      'SKILL_AUTH_FAILED',
      `${url}: the server answered ${status} ${tokenSecretName ? `to the token from secret "${tokenSecretName}"` : 'without a token (no token_secret_name is configured)'}`,
    );
  }
}

/** 404 or 410: no archive at this URL (or none this credential may see). */
export class TarballNotFoundError extends SkillError {
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super('SKILL_NOT_FOUND', `${url}: no archive there (HTTP ${status})`);
  }
}

/** The selected path is not a directory of the archive. */
export class TarballPathNotFoundError extends SkillError {
  constructor(
    readonly url: string,
    readonly path: string,
    readonly found: 'missing' | 'not a directory',
  ) {
    super('SKILL_NOT_FOUND', `${url}: the archive has no directory "${path}" (${found})`);
  }
}

/** Any other HTTP answer: a server error, a redirect (refused), an encoding we do not read. */
export class TarballHttpError extends SkillError {
  constructor(
    readonly url: string,
    readonly status: number,
    reason: string,
  ) {
    super('TARBALL_HTTP_FAILED', `${url}: ${reason}`);
  }
}

/** No HTTP answer at all (connection refused, DNS, TLS). */
export class TarballRequestError extends SkillError {
  constructor(
    readonly url: string,
    readonly method: string,
    readonly detail: string,
  ) {
    super('TARBALL_REQUEST_FAILED', `${method} ${url} failed: ${detail}`);
  }
}

/** The downloaded bytes are not the pinned archive; nothing was extracted. */
export class TarballDigestMismatchError extends SkillError {
  constructor(
    readonly url: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(
      'SKILL_CONTENT_MISMATCH',
      `${url}: the archive is ${actual}, not the pinned ${expected}; nothing was extracted`,
    );
  }
}

/** An entry the provider will not write: it leaves the directory, is a device, or clashes with another. */
export class TarballUnsafeEntryError extends SkillError {
  constructor(
    readonly url: string,
    readonly entryName: string,
    readonly problem: string,
  ) {
    super('SKILL_UNSAFE_TREE', `${url}: archive entry ${JSON.stringify(entryName.slice(0, 200))} refused: ${problem}`);
  }
}

/** The archive (compressed or unpacked) or its number of files is over the provider's limits. */
export class TarballTooLargeError extends SkillError {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super('TARBALL_TOO_LARGE', `${url}: ${reason}`);
  }
}

/** Not a gzip stream, or not a tar inside it. */
export class TarballArchiveInvalidError extends SkillError {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super('TARBALL_ARCHIVE_INVALID', `${url}: not a valid .tar.gz (${reason})`);
  }
}

/** A token_secret_name the deployment did not approve; checked by validate, before any secret is read. */
export class TarballTokenNotApprovedError extends SkillError {
  constructor(
    readonly secretName: string,
    readonly allowlistVariable: string,
  ) {
    super(
      'SKILL_CREDENTIAL_NOT_APPROVED',
      `token secret "${secretName}" is not approved: add it to ${allowlistVariable} (comma-separated), or to tokenSecretNames where the host creates the tarball provider`,
    );
  }
}

/** The secret's value cannot be sent as a bearer token (control characters, spaces). The value is not shown. */
export class TarballTokenInvalidError extends SkillError {
  constructor(readonly secretName: string) {
    super(
      'SKILL_SECRET_INVALID',
      `secret "${secretName}" is not a usable bearer token (it holds spaces or control characters)`,
    );
  }
}
