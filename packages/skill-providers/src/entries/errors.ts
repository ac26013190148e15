import { SkillError } from '../errors-base.js';

/**
 * One class per failure of a skill declaration. Callers branch on `code` (stable); the facts
 * are fields; the message names the offending entry by its index and a rendering of its
 * text in which URL userinfo, queries and anything that reads as a password are replaced
 * by `***` (see render.ts), cut to a bounded length. No error carries a credential.
 */
export type SkillEntryErrorCode =
  | 'SKILL_DECLARATION_INVALID'
  | 'SKILL_ENTRY_INVALID'
  | 'SKILL_REPOSITORY_INVALID'
  | 'SKILL_URL_HAS_CREDENTIALS'
  | 'SKILL_REF_INVALID'
  | 'SKILL_PATH_UNSAFE'
  | 'SKILL_NAME_INVALID'
  | 'SKILL_NAME_DUPLICATE';

/** Which entry an error is about: its index in the declaration (if known) and its masked rendering. */
export interface EntryLocation {
  index: number | undefined;
  entry: string;
}

function located(at: EntryLocation, problem: string): string {
  return at.index === undefined
    ? `skill entry ${at.entry}: ${problem}`
    : `skill entry ${at.index} ${at.entry}: ${problem}`;
}

export abstract class SkillEntryError extends SkillError {
  declare readonly code: SkillEntryErrorCode;
  /** The entry's position in the declaration; undefined when a single entry was parsed on its own. */
  readonly index: number | undefined;
  /** The entry, rendered for a message: masked and length-limited. */
  readonly entry: string;

  constructor(code: SkillEntryErrorCode, message: string, at: EntryLocation, options?: { cause?: unknown }) {
    super(code, message, options);
    this.index = at.index;
    this.entry = at.entry;
  }
}

/** The declaration itself is not an array of entries. */
export class SkillDeclarationInvalidError extends SkillEntryError {
  declare readonly code: 'SKILL_DECLARATION_INVALID';
  constructor(
    readonly reason: string,
    at: EntryLocation,
    options?: { cause?: unknown },
  ) {
    super('SKILL_DECLARATION_INVALID', `skill declaration ${at.entry}: ${reason}`, at, options);
  }
}

/**
 * The entry's shape is wrong: not a string or an object, a missing or mistyped field, an
 * unknown key, a config that is not plain JSON, whitespace in a git string, an empty `@` or `#`.
 */
export class SkillEntryInvalidError extends SkillEntryError {
  declare readonly code: 'SKILL_ENTRY_INVALID';
  constructor(
    readonly reason: string,
    /** The field at fault (`provider`, `config.known_hosts`…), when there is one. */
    readonly field: string | undefined,
    at: EntryLocation,
  ) {
    super('SKILL_ENTRY_INVALID', located(at, reason), at);
  }
}

/** The repository of a git entry is not one of the accepted forms (see git/source.ts). */
export class SkillRepositoryInvalidError extends SkillEntryError {
  declare readonly code: 'SKILL_REPOSITORY_INVALID';
  constructor(
    /** The repository, masked. */
    readonly repository: string,
    readonly reason: string,
    at: EntryLocation,
  ) {
    // The entry rendering already shows the masked repository.
    super('SKILL_REPOSITORY_INVALID', located(at, `the repository ${reason}`), at);
  }
}

/**
 * A URL carries userinfo (`https://user:pass@…`, `https://token@…`, `ssh://user:pass@…`), or
 * a git string reads as `user:password@host/…`. Credentials live in the vault or in named
 * secrets, never in a declaration.
 */
export class SkillUrlHasCredentialsError extends SkillEntryError {
  declare readonly code: 'SKILL_URL_HAS_CREDENTIALS';
  constructor(
    /** The URL with the credentials replaced by `***`. */
    readonly url: string,
    readonly reason: string,
    at: EntryLocation,
  ) {
    super('SKILL_URL_HAS_CREDENTIALS', located(at, `the URL ${reason}`), at);
  }
}

/** A git ref (the `@ref` of a git string, the `version` of a git object) breaks the ref-name rules. */
export class SkillRefInvalidError extends SkillEntryError {
  declare readonly code: 'SKILL_REF_INVALID';
  constructor(
    /** The ref, length-limited. */
    readonly ref: string,
    readonly reason: string,
    at: EntryLocation,
  ) {
    super('SKILL_REF_INVALID', located(at, `ref ${ref} ${reason}`), at);
  }
}

/** The skill's directory is absolute, escapes the source, or is otherwise not a clean relative path. */
export class SkillPathUnsafeError extends SkillEntryError {
  declare readonly code: 'SKILL_PATH_UNSAFE';
  constructor(
    /** The path, length-limited. */
    readonly path: string,
    readonly reason: string,
    at: EntryLocation,
    options?: { cause?: unknown },
  ) {
    super('SKILL_PATH_UNSAFE', located(at, `path ${path} ${reason}`), at, options);
  }
}

/** The installed name breaks the Agent Skills name rule (1–64 of `a-z 0-9 -`, no edge or double hyphen). */
export class SkillNameInvalidError extends SkillEntryError {
  declare readonly code: 'SKILL_NAME_INVALID';
  constructor(
    /** The name, length-limited. */
    readonly skillName: string,
    readonly reason: string,
    /** True when the name was derived from a git string rather than written. */
    readonly derived: boolean,
    at: EntryLocation,
  ) {
    super(
      'SKILL_NAME_INVALID',
      located(
        at,
        derived
          ? `the name ${skillName} derived from the git string ${reason}; use the object form with an explicit "name"`
          : `name ${skillName} ${reason}`,
      ),
      at,
    );
  }
}

/** Two entries of one declaration install the same name. */
export class DuplicateSkillNameError extends SkillEntryError {
  declare readonly code: 'SKILL_NAME_DUPLICATE';
  constructor(
    readonly skillName: string,
    /** The index of the entry that installed the name first. */
    readonly firstIndex: number,
    at: EntryLocation & { index: number },
  ) {
    super(
      'SKILL_NAME_DUPLICATE',
      located(
        at,
        `installs ${JSON.stringify(skillName)}, as entry ${firstIndex} does; installed names are unique within a declaration`,
      ),
      at,
    );
  }
}
