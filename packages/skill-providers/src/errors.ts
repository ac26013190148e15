import { type ProviderErrorCode, SkillError, type SkillErrorCode } from './errors-base.js';
export { SkillError };
export type { ProviderErrorCode, SkillErrorCode };

/** Which entry of a declaration an error is about; the text never holds a secret. */
export interface EntryRef {
  index: number;
  name: string;
  provider: string;
}

function where(entry: EntryRef | undefined): string {
  return entry ? `skill #${entry.index} "${entry.name}" (${entry.provider})` : 'skill source';
}

/** The declaration names a provider no one registered. */
export class UnknownProviderError extends SkillError {
  declare readonly code: 'SKILL_PROVIDER_UNKNOWN';
  constructor(
    readonly provider: string,
    readonly known: readonly string[],
    readonly entry?: EntryRef,
  ) {
    super(
      'SKILL_PROVIDER_UNKNOWN',
      `${entry ? `${where(entry)}: ` : ''}unknown skill provider "${provider}"; known providers: ${known.length ? known.join(', ') : '(none)'}`,
    );
  }
}

/** Two providers with one id, or a provider object that does not implement the interface. */
export class ProviderRegistrationError extends SkillError {
  declare readonly code: 'SKILL_PROVIDER_INVALID';
  constructor(
    readonly provider: string,
    reason: string,
  ) {
    super('SKILL_PROVIDER_INVALID', `cannot register skill provider "${provider}": ${reason}`);
  }
}

/** A provider refused the source's configuration (unknown option, missing field, bad value). */
export class SkillConfigError extends SkillError {
  declare readonly code: 'SKILL_CONFIG_INVALID';
  constructor(
    readonly source: string,
    readonly option: string,
    reason: string,
  ) {
    super('SKILL_CONFIG_INVALID', `${source}: config.${option} ${reason}`);
  }
}

/** A credential name that the deployment did not approve; checked before any secret is read. */
export class CredentialNotApprovedError extends SkillError {
  declare readonly code: 'SKILL_CREDENTIAL_NOT_APPROVED';
  constructor(
    readonly secretName: string,
    readonly allowlistVariable: string,
  ) {
    super(
      'SKILL_CREDENTIAL_NOT_APPROVED',
      `deploy key secret "${secretName}" is not approved: add it to ${allowlistVariable} (comma-separated)`,
    );
  }
}

/** An approved secret name with no value behind it. */
export class SecretMissingError extends SkillError {
  declare readonly code: 'SKILL_SECRET_MISSING';
  constructor(readonly secretName: string) {
    super('SKILL_SECRET_MISSING', `secret "${secretName}" has no value`);
  }
}

/** The sandbox cannot speak the source's transport (an HTTPS-only sandbox and an SSH source). */
export class TransportUnsupportedError extends SkillError {
  declare readonly code: 'SKILL_TRANSPORT_UNSUPPORTED';
  constructor(
    readonly transport: string,
    readonly sandbox: string,
  ) {
    super(
      'SKILL_TRANSPORT_UNSUPPORTED',
      `sandbox "${sandbox}" does not support ${transport} sources; there is no fallback`,
    );
  }
}

/** The phase of preparation an error happened in. */
export type Phase = 'validate' | 'resolve' | 'fetch' | 'publish' | 'cleanup';

/** The codes preparation gives a failure that is not already a SkillError, by what git or the store said. */
export type SkillPreparationCode =
  | 'SKILL_AUTH_FAILED'
  | 'SKILL_NOT_FOUND'
  | 'SKILL_REF_AMBIGUOUS'
  | 'SKILL_TOO_LARGE'
  | 'SKILL_UNSAFE_TREE'
  | 'SKILL_SOURCE_INVALID'
  | 'SKILL_RESOLVE_FAILED'
  | 'SKILL_FETCH_FAILED'
  | 'SKILL_PUBLISH_FAILED'
  | 'SKILL_CLEANUP_FAILED';

/**
 * A failure while preparing one entry, naming it and the phase. `code` says what kind:
 * `SKILL_AUTH_FAILED` when the source refused the credential (or the host key did not
 * match), `SKILL_NOT_FOUND` for a missing repository, ref or directory,
 * `SKILL_REF_AMBIGUOUS` for a name that is both a branch and a tag, `SKILL_UNSAFE_TREE`
 * for a link that leaves the directory, `SKILL_TOO_LARGE` for a directory past a fetch cap
 * (the cause, GIT_LIMIT_EXCEEDED, has `limit`, `max` and the source), `SKILL_SOURCE_INVALID`, `SKILL_RESOLVE_FAILED`, `SKILL_FETCH_FAILED` or
 * `SKILL_PUBLISH_FAILED` for anything else, by phase. A SkillError (this package's, or a
 * host provider's) keeps its own code. The provider's own error is the cause; `reason`
 * copies its code.
 */
export class SkillPreparationError extends SkillError {
  declare readonly code: SkillPreparationCode | SkillError['code'];
  constructor(
    code: SkillPreparationCode | SkillError['code'],
    readonly entry: EntryRef,
    readonly phase: Phase,
    readonly reason: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, `${where(entry)}: ${phase} failed: ${message}`, options);
  }
}

/** The prepared directory has no SKILL.md (or it is not a regular file). */
export class SkillFileMissingError extends SkillError {
  declare readonly code: 'SKILL_MD_MISSING';
  constructor(
    readonly entry: EntryRef,
    readonly path: string,
    readonly found: 'missing' | 'not a regular file',
  ) {
    super('SKILL_MD_MISSING', `${where(entry)}: the selected directory "${path || '.'}" has no SKILL.md (${found})`);
  }
}

/**
 * Content that is not what `resolve` pinned: the fetched directory, or a tree from the
 * store's registry tier, hashes to another id. Nothing of it is published.
 */
export class SkillContentMismatchError extends SkillError {
  declare readonly code: 'SKILL_CONTENT_MISMATCH';
  constructor(
    /** The content id `resolve` pinned. */
    readonly expected: string,
    /** What the content hashes to. */
    readonly actual: string,
    message: string,
    /** The source the content was fetched from; undefined for a tree from the registry tier. */
    readonly source?: string,
  ) {
    super('SKILL_CONTENT_MISMATCH', message);
  }
}

/** A provider's `resolve` returned a version or content id that cannot go into a cache key (empty, too long, with spaces). */
export class ProviderResultInvalidError extends SkillError {
  declare readonly code: 'SKILL_PROVIDER_RESULT_INVALID';
  constructor(readonly entry: EntryRef) {
    super(
      'SKILL_PROVIDER_RESULT_INVALID',
      `skill #${entry.index} "${entry.name}": provider ${entry.provider} resolved to an invalid version or content id`,
    );
  }
}

/** Preparation was cancelled; nothing of the cancelled entries was published. */
export class SkillAbortedError extends SkillError {
  declare readonly code: 'SKILL_ABORTED';
  constructor(
    readonly entry: EntryRef | undefined,
    options?: { cause?: unknown },
  ) {
    super('SKILL_ABORTED', `${where(entry)}: preparation was cancelled`, options);
  }
}

/**
 * The private folder (which held credentials) could not be removed. Reported as a failure
 * even when everything else worked: a credential may still be on disk.
 */
export class CredentialCleanupError extends SkillError {
  declare readonly code: 'SKILL_CLEANUP_FAILED';
  constructor(
    readonly entry: EntryRef,
    options?: { cause?: unknown },
  ) {
    super(
      'SKILL_CLEANUP_FAILED',
      `${where(entry)}: removing the private folder with temporary credentials failed`,
      options,
    );
  }
}

/** A lock document that is not one: it breaks schemas/skills/1/skills-lock.schema.json, or its text is no JSON. */
export class SkillLockInvalidError extends SkillError {
  declare readonly code: 'SKILL_LOCK_INVALID';
  constructor(
    /** Names the lock in the message: a file path, `lock`. */
    readonly source: string,
    /** The JSON pointer of the offending value (`/skills/0/version`); `''` for the whole document. */
    readonly path: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('SKILL_LOCK_INVALID', `skills lock ${source}${path ? ` at ${path}` : ''}: ${reason}`, options);
  }
}

/**
 * The declaration is not what the lock says: an entry the lock does not hold (`unlocked`),
 * a lock record no entry matches (`extra`, `entry.index` is the record's index in the lock),
 * or an entry whose origin now gives another version or content id than the lock's
 * (`content`). Nothing of that entry is fetched or published.
 */
export class SkillLockDriftError extends SkillError {
  declare readonly code: 'SKILL_LOCK_DRIFT';
  constructor(
    readonly entry: EntryRef,
    readonly drift: 'unlocked' | 'extra' | 'content',
    detail: string,
    /** For `content`: what the lock pinned and what the origin gave. */
    readonly expected?: { version: string; contentId: string },
    readonly actual?: { version: string; contentId: string },
  ) {
    super(
      'SKILL_LOCK_DRIFT',
      `${drift === 'extra' ? `skills lock record #${entry.index} "${entry.name}" (${entry.provider})` : where(entry)}: ${detail}`,
    );
  }
}

/** `linkSkills` would overwrite something it did not create (or that changed under it); it was left untouched. */
export class SkillLinkConflictError extends SkillError {
  declare readonly code: 'SKILL_LINK_CONFLICT';
  constructor(
    /** The path that is in the way. */
    readonly path: string,
    /** What is there (`a file`, `a folder`, `a symbolic link to elsewhere`) or what happened. */
    readonly found: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SKILL_LINK_CONFLICT',
      `${path}: ${found}, not a skill this command linked or copied; remove it or choose another folder`,
      options,
    );
  }
}

/** A prepared skill whose name is no safe single path segment (the Agent Skills name rule). */
export class SkillLinkNameInvalidError extends SkillError {
  declare readonly code: 'SKILL_LINK_NAME_INVALID';
  constructor(
    /** The name as given. */
    readonly skill: string,
    reason: string,
  ) {
    super('SKILL_LINK_NAME_INVALID', `cannot link skill ${JSON.stringify(skill.slice(0, 80))}: its name ${reason}`);
  }
}

/** Linking or copying a prepared skill failed for another reason (the folder is not writable, the skill's directory is gone). */
export class SkillLinkError extends SkillError {
  declare readonly code: 'SKILL_LINK_FAILED';
  constructor(
    readonly path: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('SKILL_LINK_FAILED', `${path}: ${reason}`, options);
  }
}
