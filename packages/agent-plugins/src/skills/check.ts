import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { SKILL_FINDING_CODES, type SkillFindingCode } from './codes.js';
import { parseFrontmatter } from './frontmatter.js';
import { isRecord, pointerToken, yamlKindOf } from '../values.js';

export interface SkillCheck {
  /** False when any finding is an error: the skill is not packaged, and a reader skips it (§7.1). */
  accepted: boolean;
  /** The parsed frontmatter, whenever it parsed to a mapping (also when not accepted). */
  frontmatter?: Record<string, unknown>;
  /** Sorted with sortFindings. Messages never quote a frontmatter value. */
  findings: Finding[];
}

export const SKILL_FILE = 'SKILL.md';
const MAX_NAME_LENGTH = 64;
const MAX_DESCRIPTION_LENGTH = 1024;
const MAX_COMPATIBILITY_LENGTH = 500;

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'description',
  'license',
  'compatibility',
  'metadata',
  'allowed-tools',
]);

// Code points, as the Agent Skills validators count characters (Python len), not UTF-16 units.
const length = (s: string) => Array.from(s).length;

/**
 * Why `name` breaks the Agent Skills name rule, or undefined when it is valid. ASCII only (see
 * checkSkill for why): `a-z`, `0-9` and `-`, 1-64 characters, no `-` at either end, no `--`.
 */
export function skillNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (length(name) > MAX_NAME_LENGTH) return `is longer than ${MAX_NAME_LENGTH} characters`;
  if (!/^[a-z0-9-]+$/.test(name)) return 'may hold only lower-case ASCII letters a-z, digits and "-"';
  if (name.startsWith('-') || name.endsWith('-')) return 'must not start or end with "-"';
  if (name.includes('--')) return 'contains "--"';
  return undefined;
}

/**
 * Checks one skill, `skills/<name>/SKILL.md`, against the Agent Skills rules (AR9O1). `name` is the
 * directory name. Every error makes the skill not accepted: it is not packaged, and a reader skips
 * it. Frontmatter parsing follows parseFrontmatter.
 *
 * Where validators disagree, this is the choice:
 *
 * | Point                            | Choice                                   | Why |
 * |----------------------------------|------------------------------------------|-----|
 * | Unicode letters in `name`        | refused: ASCII `a-z0-9-` only (skill.name-invalid) | the stricter validators accept nothing else, and the name is a directory that NFC/NFD file systems spell differently |
 * | unknown frontmatter keys         | warning, kept (skill.unknown-field)       | clients such as Claude Code define their own keys; refusing them would drop working skills |
 * | empty `compatibility`            | warning, packaged (skill.compatibility-empty) | the reference accepts it; the warning tells the author to leave the field out |
 * | `<` or `>` in `description`      | warning, packaged (skill.description-angle-brackets) | the reference accepts it; one validator does not |
 * | lowercase `skill.md`             | not a skill (skill.file-name-case, see selectSkills) | Agent Plugins §7.1 names the file exactly `SKILL.md` |
 * | name differs from directory      | error, not packaged (skill.name-mismatch) | the reference errors and Agent Plugins packagers skip it |
 * | over-long `name`                 | error (skill.name-invalid)                | the reference errors; lenient clients only warn |
 * | YAML scalars                     | YAML 1.2 core types; a number, boolean or null where a string is required is an error (skill.field-not-string), in `metadata` a warning (skill.metadata-value-not-string) | the reference reads every scalar as a string, ordinary readers do not; a package must load the same in both, so the author quotes it |
 * | `allowed-tools` not a string     | warning, packaged (skill.allowed-tools-invalid) | the field is experimental and some clients take a list |
 *
 * Pure; the input is not changed.
 */
export function checkSkill(name: string, skillMd: Uint8Array): SkillCheck {
  const file = `skills/${name}/${SKILL_FILE}`;
  const parsed = parseFrontmatter(skillMd, file);
  const findings = [...parsed.problems];
  const data = parsed.data;
  if (data === undefined) return skillCheckOf(findings, undefined);
  const check: FrontmatterCheck = {
    data,
    report: (code, pointer, message) => {
      findings.push(findingFrom(SKILL_FINDING_CODES, code, `${file}#/frontmatter${pointer}`, message));
    },
  };
  checkNameField(check, name);
  checkDescriptionField(check);
  stringField(check, 'license');
  checkCompatibilityField(check);
  checkMetadataField(check);
  checkAllowedToolsField(check);
  checkUnknownFields(check);
  return skillCheckOf(findings, data);
}

/** The frontmatter mapping of one SKILL.md, and how a finding at a pointer inside it is reported. */
interface FrontmatterCheck {
  readonly data: Record<string, unknown>;
  report(code: SkillFindingCode, pointer: string, message: string): void;
}

/** The check's verdict: accepted when no finding is an error; findings sorted. */
function skillCheckOf(findings: Finding[], frontmatter: Record<string, unknown> | undefined): SkillCheck {
  const sorted = sortFindings(findings);
  const accepted = !sorted.some((f) => f.severity === 'error');
  return frontmatter === undefined ? { accepted, findings: sorted } : { accepted, frontmatter, findings: sorted };
}

/**
 * The string value of `key`, or undefined when it is absent or not a string. A string field of
 * the wrong type is reported once, here, and not checked further.
 */
function stringField({ data, report }: FrontmatterCheck, key: string): string | undefined {
  if (!Object.hasOwn(data, key)) return undefined;
  const value = data[key];
  if (typeof value === 'string') return value;
  report('skill.field-not-string', `/${key}`, `must be a string, not ${yamlKindOf(value)}; quote the value`);
  return undefined;
}

/** `name`: required, the Agent Skills name rule, and equal to the skill directory name `dirName`. */
function checkNameField(check: FrontmatterCheck, dirName: string): void {
  const { data, report } = check;
  if (!Object.hasOwn(data, 'name')) {
    report('skill.name-missing', '/name', 'is required');
    return;
  }
  const value = stringField(check, 'name');
  if (value === undefined) return;
  const problem = skillNameProblem(value);
  if (problem !== undefined) report('skill.name-invalid', '/name', problem);
  if (value !== dirName)
    report('skill.name-mismatch', '/name', 'differs from the skill directory name; the skill is not packaged');
}

/** `description`: required, not empty, at most MAX_DESCRIPTION_LENGTH characters; `<` or `>` is a warning. */
function checkDescriptionField(check: FrontmatterCheck): void {
  const { data, report } = check;
  if (!Object.hasOwn(data, 'description')) {
    report('skill.description-missing', '/description', 'is required; the skill is not packaged');
    return;
  }
  const value = stringField(check, 'description');
  if (value === undefined) return;
  if (value.trim() === '') report('skill.description-missing', '/description', 'is empty; the skill is not packaged');
  else if (length(value) > MAX_DESCRIPTION_LENGTH) {
    report(
      'skill.description-too-long',
      '/description',
      `is ${length(value)} characters, more than ${MAX_DESCRIPTION_LENGTH}`,
    );
  }
  if (/[<>]/.test(value))
    report('skill.description-angle-brackets', '/description', 'holds "<" or ">", which some validators reject');
}

/** `compatibility`: optional; empty is a warning, longer than MAX_COMPATIBILITY_LENGTH characters an error. */
function checkCompatibilityField(check: FrontmatterCheck): void {
  const { report } = check;
  const compatibility = stringField(check, 'compatibility');
  if (compatibility === undefined) return;
  if (compatibility.trim() === '')
    report('skill.compatibility-empty', '/compatibility', 'is empty; leave the field out instead');
  else if (length(compatibility) > MAX_COMPATIBILITY_LENGTH) {
    report(
      'skill.compatibility-too-long',
      '/compatibility',
      `is ${length(compatibility)} characters, more than ${MAX_COMPATIBILITY_LENGTH}`,
    );
  }
}

/** `metadata`: optional, a map of strings; a nested value is an error, a scalar that is not a string a warning. */
function checkMetadataField({ data, report }: FrontmatterCheck): void {
  if (!Object.hasOwn(data, 'metadata')) return;
  const metadata = data.metadata;
  if (!isRecord(metadata)) {
    report('skill.metadata-invalid', '/metadata', `must be a map of strings, not ${yamlKindOf(metadata)}`);
    return;
  }
  for (const [key, value] of Object.entries(metadata)) {
    const pointer = `/metadata/${pointerToken(key)}`;
    if (typeof value === 'string') continue;
    if (value !== null && typeof value === 'object')
      report('skill.metadata-invalid', pointer, `must be a string, not ${yamlKindOf(value)}`);
    else report('skill.metadata-value-not-string', pointer, `is ${yamlKindOf(value)}, not a string; quote the value`);
  }
}

/** `allowed-tools`: optional, experimental; anything but a string is a warning. */
function checkAllowedToolsField({ data, report }: FrontmatterCheck): void {
  if (Object.hasOwn(data, 'allowed-tools') && typeof data['allowed-tools'] !== 'string') {
    report(
      'skill.allowed-tools-invalid',
      '/allowed-tools',
      `must be a space-separated string, not ${yamlKindOf(data['allowed-tools'])}`,
    );
  }
}

/** Every key that is no Agent Skills field: a warning, and the key is kept. */
function checkUnknownFields({ data, report }: FrontmatterCheck): void {
  for (const key of Object.keys(data)) {
    if (!KNOWN_FIELDS.has(key))
      report(
        'skill.unknown-field',
        `/${pointerToken(key)}`,
        'is not an Agent Skills field; clients that do not know it ignore it',
      );
  }
}
