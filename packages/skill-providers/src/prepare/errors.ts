import { GitAbortedError } from '@agentproto/git';
import { AcquisitionAbortedError, ContentCacheError } from '@agentproto/content-cache';
import {
  type EntryRef,
  type Phase,
  SkillAbortedError,
  SkillError,
  SkillLockDriftError,
  SkillPreparationError,
  type SkillPreparationCode,
} from '../errors.js';

const AUTH_CODES = new Set(['GIT_AUTH_FAILED', 'GIT_HOST_KEY']);
const NOT_FOUND_CODES = new Set([
  'GIT_REPOSITORY_NOT_FOUND',
  'GIT_REF_NOT_FOUND',
  'GIT_NOT_A_DIRECTORY',
  'GIT_COMMIT_UNAVAILABLE',
  'GIT_COMMIT_NOT_FOUND',
  'SKILL_NOT_FOUND',
]);
const AMBIGUOUS_CODES = new Set(['GIT_AMBIGUOUS_REF', 'GIT_AMBIGUOUS_COMMIT']);

const PHASE_CODES: Record<Phase, SkillPreparationCode> = {
  validate: 'SKILL_SOURCE_INVALID',
  resolve: 'SKILL_RESOLVE_FAILED',
  fetch: 'SKILL_FETCH_FAILED',
  publish: 'SKILL_PUBLISH_FAILED',
  cleanup: 'SKILL_CLEANUP_FAILED',
};

/**
 * A provider's or the store's failure as the error preparation rejects with: it names the
 * entry and the phase, and its `code` says what kind of failure it was. Errors of this
 * package keep their own code; git's authentication and host key failures become
 * SKILL_AUTH_FAILED, its "not there" failures SKILL_NOT_FOUND, ambiguous names
 * SKILL_REF_AMBIGUOUS, links leaving the directory SKILL_UNSAFE_TREE, and a directory past
 * a fetch cap (entries, bytes, depth) SKILL_TOO_LARGE, its cause naming the limit.
 */
export function preparationError(error: unknown, entry: EntryRef, phase: Phase, signal: AbortSignal): SkillError {
  if (
    error instanceof SkillPreparationError ||
    error instanceof SkillAbortedError ||
    error instanceof SkillLockDriftError
  )
    return error;
  if (signal.aborted || error instanceof GitAbortedError || error instanceof AcquisitionAbortedError) {
    return new SkillAbortedError(entry, { cause: error });
  }
  // A sandbox's own failure (SKILL_EGRESS_REFUSED), which the git engine passed on as its cause.
  const fromSandbox = !(error instanceof SkillError) && error instanceof Error && error.cause instanceof SkillError;
  const reason = fromSandbox ? (error.cause as SkillError).code : codeOf(error);
  const message = fromSandbox
    ? (error.cause as SkillError).message
    : error instanceof Error
      ? error.message
      : String(error);
  let code: SkillPreparationError['code'];
  if (error instanceof SkillError) code = error.code;
  else if (fromSandbox) code = (error.cause as SkillError).code;
  else if (AUTH_CODES.has(reason)) code = 'SKILL_AUTH_FAILED';
  else if (NOT_FOUND_CODES.has(reason)) code = 'SKILL_NOT_FOUND';
  else if (AMBIGUOUS_CODES.has(reason)) code = 'SKILL_REF_AMBIGUOUS';
  else if (reason === 'GIT_LIMIT_EXCEEDED') code = 'SKILL_TOO_LARGE';
  else if ((error instanceof ContentCacheError && reason === 'CACHE_UNSAFE_TREE') || reason === 'GIT_UNSAFE_TREE')
    code = 'SKILL_UNSAFE_TREE';
  else code = PHASE_CODES[phase];
  return new SkillPreparationError(code, entry, phase, reason, message, { cause: error });
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
}
