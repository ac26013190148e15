import { DocumentError, parseUntrustedJson } from '@agentproto/documents';
import { type CanonicalDeclaration, canonicalDeclaration, parseSkillEntry } from '../entries/index.js';
import { schemaProblem } from '../entries/schema.js';
import { type EntryRef, SkillLockDriftError, SkillLockInvalidError } from '../errors.js';
import type { ResolvedSkillSource, SkillSource } from '../provider.js';

/**
 * What a declaration resolved to, for preparing exactly that again: the document
 * `lockSkills` returns and `agentproto skills lock` writes (skills.lock.json). Its JSON
 * Schema is schemas/skills/1/skills-lock.schema.json
 * (`$id` https://agentproto.sh/schemas/skills/1/skills-lock.schema.json).
 */
export interface SkillLock {
  /** The format: 1. */
  lockfileVersion: 1;
  /** One record per entry of the declaration, in its order. */
  skills: LockedSkill[];
}

/** One entry of a declaration and what it resolved to. */
export interface LockedSkill {
  /** The entry as declared, canonical (a git string read into its object form), without the name. */
  declaration: LockedSkillDeclaration;
  /** The installed name. */
  name: string;
  /** The provider's id. */
  provider: string;
  /** The resolved version: for git, the full commit id. */
  version: string;
  /** The content's id: for git, the tree id of the skill's directory. */
  contentId: string;
}

/** An entry's canonical declaration: what identifies its content. Config keys are sorted at every level. */
export interface LockedSkillDeclaration {
  /** The provider's id. */
  provider: string;
  /** The source as declared (for git, the repository). */
  source: string;
  /** The version as declared (a branch, a tag, `HEAD`): what moves; the record's `version` is what it was. */
  version: string;
  /** The skill's directory in the source, normalized; `''` for the root. */
  path: string;
  /** The provider's options as declared, keys sorted. */
  config: { [key: string]: unknown };
}

/** Lock files are larger than declarations: 1,000 records with their configs. */
const LOCK_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Checks a lock document (JSON already parsed, or a value a host built) against
 * schemas/skills/1/skills-lock.schema.json and returns it typed; `source` names it in
 * errors (a file path; `(value)` by default). Throws SkillLockInvalidError (`SKILL_LOCK_INVALID`) naming the
 * offending value's JSON pointer.
 */
export function parseSkillLock(value: unknown, source = '(value)'): SkillLock {
  const problem = schemaProblem('lock', value);
  if (problem) throw new SkillLockInvalidError(source, problem.path, problem.message);
  return value as SkillLock;
}

/**
 * A lock file's text (JSON, bounded to 4 MiB under the shared rules for documents from
 * strangers), checked as parseSkillLock does. A text that is no JSON is SKILL_LOCK_INVALID
 * whose cause is the DocumentError naming the line.
 */
export function parseSkillLockText(text: string | Uint8Array, options: { source: string }): SkillLock {
  let value: unknown;
  try {
    value = parseUntrustedJson(text, { source: options.source, limits: { maxBytes: LOCK_MAX_BYTES } });
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    throw new SkillLockInvalidError(options.source, '', error.detail, { cause: error });
  }
  return parseSkillLock(value, options.source);
}

/** The record of one entry, for lockSkills. */
export function lockedSkill(source: SkillSource, resolved: ResolvedSkillSource): LockedSkill {
  return {
    declaration: canonicalDeclaration(source),
    name: source.name,
    provider: source.provider,
    version: resolved.version,
    contentId: resolved.contentId,
  };
}

/** An entry pinned by the lock: the source to resolve and fetch (its version the locked one) and the record. */
export interface PinnedEntry {
  source: SkillSource;
  record: LockedSkill;
}

/**
 * Each entry matched to its lock record by name and canonical declaration, and pinned to
 * the record's version (a provider's resolved version names exactly that version when
 * declared: git's full commit id, the local provider's tree digest). Throws
 * SkillLockDriftError for an entry the lock does not hold, or a record no entry matches,
 * before anything runs.
 */
export function pinToLock(sources: readonly SkillSource[], lock: SkillLock): PinnedEntry[] {
  const records = new Map<string, { record: LockedSkill; index: number }[]>();
  lock.skills.forEach((record, index) => {
    const id = lockId(record.name, canonicalOf(record.declaration));
    records.set(id, [...(records.get(id) ?? []), { record, index }]);
  });
  const pinned = sources.map((source, index) => {
    const entry: EntryRef = { index, name: source.name, provider: source.provider };
    const found = records.get(lockId(source.name, canonicalDeclaration(source)))?.shift();
    if (!found) {
      throw new SkillLockDriftError(
        entry,
        'unlocked',
        'the lock holds no record of this entry as declared; lock the declaration again',
      );
    }
    const { record } = found;
    const { provider, source: from, path, name, config } = source;
    // Read again with the locked version: the provider's own grammar types it (git: a commit id).
    return {
      source: parseSkillEntry({ provider, source: from, version: record.version, path, name, config }, index),
      record,
    };
  });
  for (const left of records.values()) {
    const extra = left[0];
    if (extra) {
      throw new SkillLockDriftError(
        { index: extra.index, name: extra.record.name, provider: extra.record.provider },
        'extra',
        'no entry of the declaration matches this lock record; lock the declaration again',
      );
    }
  }
  return pinned;
}

/** Throws SkillLockDriftError when the origin's answer for a pinned entry is not the lock's. */
export function assertLocked(record: LockedSkill, resolved: ResolvedSkillSource, entry: EntryRef): void {
  if (resolved.version === record.version && resolved.contentId === record.contentId) return;
  throw new SkillLockDriftError(
    entry,
    'content',
    `the origin gives version ${resolved.version} content ${resolved.contentId}, the lock ${record.version} content ${record.contentId}`,
    { version: record.version, contentId: record.contentId },
    { version: resolved.version, contentId: resolved.contentId },
  );
}

function canonicalOf(declaration: LockedSkillDeclaration): CanonicalDeclaration {
  return canonicalDeclaration({ ...declaration, name: '', config: declaration.config } as SkillSource);
}

function lockId(name: string, declaration: CanonicalDeclaration): string {
  return JSON.stringify([name, declaration]);
}
