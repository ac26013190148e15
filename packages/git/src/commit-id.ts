import { GitAbbreviatedShaError, GitInvalidCommitIdError, GitUppercaseShaError } from './errors.js';

const FULL_ID = /^[0-9a-f]{40}$/;

/** A full SHA-1 object id as git prints it: 40 lower-case hex digits. */
export function isFullCommitId(value: string): boolean {
  return typeof value === 'string' && FULL_ID.test(value);
}

/** 40 hex digits with at least one upper-case letter. */
export function isUppercaseCommitId(value: string): boolean {
  return /^[0-9a-fA-F]{40}$/.test(value) && !FULL_ID.test(value);
}

/** 4 to 39 hex digits, either case: what `git rev-parse --short` prints (4 is git's minimum). */
export function looksAbbreviated(value: string): boolean {
  return /^[0-9a-fA-F]{4,39}$/.test(value);
}

/** Throws the most precise error for anything that is not a full lower-case commit id. */
export function assertFullCommitId(value: string): void {
  if (isFullCommitId(value)) return;
  if (typeof value === 'string' && isUppercaseCommitId(value)) throw new GitUppercaseShaError(value);
  if (typeof value === 'string' && looksAbbreviated(value)) throw new GitAbbreviatedShaError(value);
  throw new GitInvalidCommitIdError(String(value));
}
