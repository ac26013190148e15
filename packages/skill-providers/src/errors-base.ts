import type { SkillEntryErrorCode } from './entries/errors.js';

/**
 * Every code this package's errors carry, by where they arise. Stable: hosts and tests
 * match on them.
 */
export type SkillErrorCode =
  // Parsing a declaration (entries/errors.ts).
  | SkillEntryErrorCode
  // The registry.
  | 'SKILL_PROVIDER_UNKNOWN'
  | 'SKILL_PROVIDER_INVALID'
  // A provider's `validate`.
  | 'SKILL_CONFIG_INVALID'
  | 'SKILL_CREDENTIAL_NOT_APPROVED'
  | 'SKILL_SOURCE_INVALID'
  // Reading the credential, choosing the transport.
  | 'SKILL_SECRET_MISSING'
  | 'SKILL_TRANSPORT_UNSUPPORTED'
  // A sandbox that cannot isolate on this machine (bubblewrapSandbox).
  | 'SKILL_SANDBOX_UNAVAILABLE'
  | 'SKILL_EGRESS_REFUSED'
  // Resolving and fetching an entry.
  | 'SKILL_AUTH_FAILED'
  | 'SKILL_NOT_FOUND'
  | 'SKILL_REF_AMBIGUOUS'
  | 'SKILL_TOO_LARGE'
  | 'SKILL_PROVIDER_RESULT_INVALID'
  | 'SKILL_VERSION_MISMATCH'
  | 'SKILL_SOURCE_CHANGED'
  // Checks before publication.
  | 'SKILL_MD_MISSING'
  | 'SKILL_UNSAFE_TREE'
  | 'SKILL_CONTENT_MISMATCH'
  // Anything else, by phase.
  | 'SKILL_RESOLVE_FAILED'
  | 'SKILL_FETCH_FAILED'
  | 'SKILL_PUBLISH_FAILED'
  // Cancellation and cleanup.
  | 'SKILL_ABORTED'
  | 'SKILL_CLEANUP_FAILED'
  // Lock files (prepare/lock.ts).
  | 'SKILL_LOCK_INVALID'
  | 'SKILL_LOCK_DRIFT'
  // Linking prepared skills into a folder (link/link.ts).
  | 'SKILL_LINK_CONFLICT'
  | 'SKILL_LINK_NAME_INVALID'
  | 'SKILL_LINK_FAILED';

/**
 * The code of a failure kind a host's own provider defines (`TARBALL_HTTP_FAILED`): any
 * string. Preparation keeps it when it wraps the provider's SkillError with the entry.
 */
export type ProviderErrorCode = string & Record<never, never>;

/**
 * The base of every error this package throws, and of a host provider's own. Callers
 * branch on `code`, which is stable; the facts are fields of each subclass; the message is
 * for humans and never holds a credential. Abstract: each failure kind is a subclass with
 * a literal `code`.
 */
export abstract class SkillError extends Error {
  readonly code: SkillErrorCode | ProviderErrorCode;

  protected constructor(code: SkillErrorCode | ProviderErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    // `code` first, then `name`: the order of their keys in JSON.
    this.code = code;
    this.name = new.target.name;
  }

  /** `name`, `code`, `message` and the facts; never the cause, which is for debugging. */
  toJSON(): Record<string, unknown> {
    return { ...(this as object), message: this.message };
  }
}
