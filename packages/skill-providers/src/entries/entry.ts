import type { SkillSource } from '../provider.js';
import {
  DuplicateSkillNameError,
  SkillDeclarationInvalidError,
  SkillEntryInvalidError,
  SkillNameInvalidError,
  SkillUrlHasCredentialsError,
  type EntryLocation,
} from './errors.js';
import { type GitSource, parseGitStringAt, readGitEntryAt, withGitSource } from '../git/source.js';
import { skillNameProblem } from './name.js';
import { normalizePath } from './path.js';
import { kindOf, quote, renderEntry, showSource, splitHostPort, splitUrlPrefix } from './render.js';
import { schemaProblem } from './schema.js';

/**
 * One entry of a skills declaration, as a host writes it: a git string
 * (`repository[@ref][#directory]`, see parseGitString) or a source object. A declaration is
 * a `readonly SkillDeclaration[]`; its JSON Schema is schemas/skills/1/skills.schema.json
 * (`$id` https://agentproto.sh/schemas/skills/1/skills.schema.json).
 *
 * The type is a help, not a check: every declaration is checked at run time against the
 * schema and the parser, since a host may cast JSON from a stranger to it.
 *
 * @example
 * const declaration: SkillDeclaration[] = [
 *   'https://github.com/acme/skills.git@v1.4.0#skills/review',
 *   { provider: 'git', source: 'git@code.example.com:team/skills.git', version: 'main', path: 'skills/deploy',
 *     name: 'deploy', config: { deploy_key_secret_name: 'skills-read-key', known_hosts: 'code.example.com ssh-ed25519 AAAA…' } },
 * ];
 */
export type SkillDeclaration = string | SkillSourceDeclaration;

/** The object form of a skill entry. Unknown keys are refused. */
export interface SkillSourceDeclaration {
  /** The provider's id, as the host registered it: `git` is built in. */
  readonly provider: string;
  /** What the provider fetches from; for git the repository URL or scp-like address, never with credentials in it. */
  readonly source: string;
  /** Which version: for git a branch, a tag, `refs/…` or a commit id (a full 40-digit lower-case id for reproducibility). */
  readonly version: string;
  /** The skill's directory in the source, relative and `/`-separated; the source root by default. It must hold SKILL.md. */
  readonly path?: string;
  /** The installed name (Agent Skills rule: 1 to 64 of `a-z 0-9 -`, no `-` at either end, no `--`); unique in a declaration. */
  readonly name: string;
  /** The provider's options, plain JSON; each provider refuses options it does not know. git over SSH: `deploy_key_secret_name`, `known_hosts`. */
  readonly config?: Readonly<Record<string, unknown>>;
}

/**
 * A skill entry: a git string (see parseGitString) or an object.
 *
 * | Field      | Required | Accepted                                                     | Default |
 * |------------|----------|--------------------------------------------------------------|---------|
 * | `provider` | yes      | a non-empty string without whitespace or control characters  |         |
 * | `source`   | yes      | a non-empty string without control characters or edge spaces; no credentials in a URL's userinfo | |
 * | `version`  | yes      | a non-empty string without whitespace or control characters  |         |
 * | `path`     | no       | a relative directory, normalized by normalizeDirectoryPath   | `''`    |
 * | `name`     | yes      | the Agent Skills name rule (skillNameProblem)                |         |
 * | `config`   | no       | a plain object of JSON values (finite numbers, no undefined), nested ≤ 32 levels | `{}` |
 *
 * Any other key is refused; `undefined` counts as absent for `path` and `config`. For
 * `provider: 'git'` the object gets the checks of the git string form: `source` follows
 * the repository grammar (its path may hold `@` here) and `version` is a hex commit id or
 * a valid ref name: the git provider's grammar (git/source.ts) reads them, once. Other
 * providers' `source` and `version` are theirs to check.
 *
 * Credentials: any userinfo in an `http(s)://` source, and a userinfo with a `:` in any
 * `scheme://` source, is refused for every provider.
 *
 * Pure: the result shares nothing with `entry` (config is copied).
 */
export function parseSkillEntry(entry: unknown, index: number): SkillSource {
  if (typeof entry === 'string') return parseGitStringAt(entry, index);
  const at: EntryLocation = { index, entry: renderEntry(entry) };
  if (!isPlainObject(entry)) {
    throw new SkillEntryInvalidError(`must be a git string or an object, not ${kindOf(entry)}`, undefined, at);
  }
  for (const key of Object.keys(entry)) {
    if (!(ENTRY_KEYS as readonly string[]).includes(key)) {
      throw new SkillEntryInvalidError(
        `has an unknown key ${quote(key, 40)}; the keys are ${ENTRY_KEYS.join(', ')}`,
        key.length > 40 ? `${key.slice(0, 40)}…` : key,
        at,
      );
    }
  }
  const provider = requiredString(entry, 'provider', at, 'no-space');
  const source = requiredString(entry, 'source', at, 'no-edge-space');
  checkSourceCredentials(source, at);
  const version = requiredString(entry, 'version', at, 'no-space');
  const name = requiredString(entry, 'name', at, 'any');

  let path = '';
  if (entry.path !== undefined) {
    if (typeof entry.path !== 'string')
      throw new SkillEntryInvalidError(`"path" must be a string, not ${kindOf(entry.path)}`, 'path', at);
    path = normalizePath(entry.path, at);
  }

  let config: Record<string, unknown> = {};
  if (entry.config !== undefined) {
    if (!isPlainObject(entry.config)) {
      throw new SkillEntryInvalidError(`"config" must be a plain object, not ${kindOf(entry.config)}`, 'config', at);
    }
    config = copyJson(entry.config, 'config', at, 0, { left: MAX_CONFIG_VALUES }) as Record<string, unknown>;
  }

  const git: GitSource | undefined = provider === 'git' ? readGitEntryAt(source, version, path, at) : undefined;

  const problem = skillNameProblem(name);
  if (problem !== undefined) throw new SkillNameInvalidError(quote(name, 64), problem, false, at);
  const parsed: SkillSource = { provider, source, version, path, name, config };
  return git ? withGitSource(parsed, git) : parsed;
}

/**
 * A declaration: an array of entries, whose installed names are unique. Parses the entries
 * in order and throws the first problem found, with its entry's index. At most
 * MAX_DECLARATION_ENTRIES entries, each `config` at most MAX_CONFIG_VALUES values: a
 * declaration from a stranger bounds the work it causes before any of it starts.
 */
export function parseSkillDeclaration(value: unknown): SkillSource[] {
  // The schema (schemas/skills/1/skills.schema.json) is the gate, the parser words the
  // refusal: what the schema refuses, the parser refuses with its own message below; were
  // the parser ever more lenient, the schema's problem is thrown instead.
  const problem =
    Array.isArray(value) && value.length <= MAX_DECLARATION_ENTRIES ? schemaProblem('declaration', value) : undefined;
  if (!Array.isArray(value)) {
    throw new SkillDeclarationInvalidError(`must be an array of skill entries, not ${kindOf(value)}`, {
      index: undefined,
      entry: `(${kindOf(value)})`,
    });
  }
  if (value.length > MAX_DECLARATION_ENTRIES) {
    throw new SkillDeclarationInvalidError(`holds ${value.length} entries, more than ${MAX_DECLARATION_ENTRIES}`, {
      index: undefined,
      entry: '(array)',
    });
  }
  const sources: SkillSource[] = [];
  const firstIndexByName = new Map<string, number>();
  for (let index = 0; index < value.length; index += 1) {
    const entry: unknown = value[index];
    const source = parseSkillEntry(entry, index);
    const firstIndex = firstIndexByName.get(source.name);
    if (firstIndex !== undefined) {
      throw new DuplicateSkillNameError(source.name, firstIndex, { index, entry: renderEntry(entry) });
    }
    firstIndexByName.set(source.name, index);
    sources.push(source);
  }
  if (problem) throw schemaRefusal(problem, value as unknown[]);
  return sources;
}

/** What the schema refused and the parser let through, as the entry error it is. */
function schemaRefusal(
  problem: { path: string; message: string },
  entries: readonly unknown[],
): SkillEntryInvalidError {
  const [, index, field] = problem.path.split('/');
  const at = Number(index);
  const location: EntryLocation = Number.isInteger(at)
    ? { index: at, entry: renderEntry(entries[at]) }
    : { index: undefined, entry: '(array)' };
  return new SkillEntryInvalidError(
    `does not match the skills declaration schema${problem.path ? ` at ${problem.path}` : ''}: ${problem.message}`,
    field,
    location,
  );
}

/** A JSON value, as config holds after parsing (the same shape as the content cache's JsonValue). */
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The fields that identify a skill's content, in a fixed order, config keys sorted at every level. */
export type CanonicalDeclaration = {
  provider: string;
  source: string;
  version: string;
  path: string;
  config: { [key: string]: JsonValue };
};

/**
 * What identifies the content an entry asks for, as a plain JSON object whose
 * `JSON.stringify` is the same for equal declarations: for a cache key. The `name` is
 * left out: two entries that differ only in the name they install share their content.
 */
export function canonicalDeclaration(source: SkillSource): CanonicalDeclaration {
  return {
    provider: source.provider,
    source: source.source,
    version: source.version,
    path: source.path,
    config: sortKeys(source.config) as { [key: string]: JsonValue },
  };
}

const ENTRY_KEYS = ['provider', 'source', 'version', 'path', 'name', 'config'] as const;
const MAX_CONFIG_DEPTH = 32;
/** Values in one entry's `config`, containers included: far above any provider's needs. */
const MAX_CONFIG_VALUES = 10_000;
/** Entries in one declaration. */
const MAX_DECLARATION_ENTRIES = 1_000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

type StringRule = 'no-space' | 'no-edge-space' | 'any';

function requiredString(entry: Record<string, unknown>, field: string, at: EntryLocation, rule: StringRule): string {
  const value = entry[field];
  if (value === undefined) throw new SkillEntryInvalidError(`is missing "${field}"`, field, at);
  if (typeof value !== 'string')
    throw new SkillEntryInvalidError(`"${field}" must be a string, not ${kindOf(value)}`, field, at);
  if (value === '') throw new SkillEntryInvalidError(`"${field}" is empty`, field, at);
  if (rule === 'any') return value;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new SkillEntryInvalidError(`"${field}" contains a control character`, field, at);
  }
  if (rule === 'no-space' && /\s/.test(value))
    throw new SkillEntryInvalidError(`"${field}" contains whitespace`, field, at);
  if (value.trim() !== value) throw new SkillEntryInvalidError(`"${field}" begins or ends with whitespace`, field, at);
  return value;
}

/** Userinfo in a `scheme://` source: any in http(s), a password (`:`) in any scheme, or a password that cut the authority short. */
function checkSourceCredentials(source: string, at: EntryLocation): void {
  const url = splitUrlPrefix(source);
  if (!url) return;
  const authority = source.slice(url.start, url.end);
  const userEnd = authority.lastIndexOf('@');
  const web = url.scheme === 'http' || url.scheme === 'https';
  const hostPort = authority.slice(userEnd + 1);
  const cutShort =
    userEnd < 0 && hostPort.includes(':') && !splitHostPort(hostPort) && source.indexOf('@', url.end) >= 0;
  if ((userEnd >= 0 && (web || authority.slice(0, userEnd).includes(':'))) || cutShort) {
    throw new SkillUrlHasCredentialsError(
      showSource(source),
      'carries credentials in its userinfo; remove them (they come from the vault or a named secret)',
      at,
    );
  }
}

function fieldPath(parent: string, key: string): string {
  const shown = key.length > 40 ? `${key.slice(0, 40)}…` : key;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(shown) ? `${parent}.${shown}` : `${parent}[${JSON.stringify(shown)}]`;
}

/** A copy of a JSON value (null, boolean, finite number, string, array, plain object), or a refusal naming the field. */
function copyJson(value: unknown, field: string, at: EntryLocation, depth: number, budget: { left: number }): unknown {
  budget.left -= 1;
  if (budget.left < 0)
    throw new SkillEntryInvalidError(`"config" holds more than ${MAX_CONFIG_VALUES} values`, 'config', at);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw new SkillEntryInvalidError(`"${field}" is ${value}, not a JSON number`, field, at);
  }
  if (depth >= MAX_CONFIG_DEPTH)
    throw new SkillEntryInvalidError(`"${field}" is nested more than ${MAX_CONFIG_DEPTH} levels deep`, field, at);
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    for (let i = 0; i < value.length; i += 1) copy.push(copyJson(value[i], `${field}[${i}]`, at, depth + 1, budget));
    return copy;
  }
  if (isPlainObject(value)) {
    // fromEntries defines keys as own data properties, so a `__proto__` key stays a key.
    return Object.fromEntries(
      Object.keys(value).map((key) => [key, copyJson(value[key], fieldPath(field, key), at, depth + 1, budget)]),
    );
  }
  throw new SkillEntryInvalidError(`"${field}" holds ${kindOf(value)}, not a JSON value`, field, at);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((key) => [key, sortKeys(record[key])]),
    );
  }
  return value;
}
