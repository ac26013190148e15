import type { FindingCodeInfo } from '../findings.js';

/**
 * Every finding the skill checks emit, all under AR9O1 (a skill breaks the Agent Skills rules
 * or is not at skills/<name>/SKILL.md). error: the skill is not packaged and a reader skips it,
 * as §7.1 requires of a client for a non-conforming skill; warning: the skill is packaged and a
 * strict validator or client may complain about the one value named.
 */
export const SKILL_FINDING_CODES = Object.freeze({
  'skill.not-in-directory': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'A SKILL.md directly in skills/ is not a skill: each skill is an immediate child directory of skills/ holding SKILL.md (Agent Plugins §4.2, §7.1).',
  },
  'skill.nested': {
    rule: 'AR9O1',
    severity: 'error',
    text:
      'A SKILL.md deeper than skills/<name>/SKILL.md, under a directory that is not itself a skill, is never found: clients must not ' +
      'search below the immediate children of skills/ (Agent Plugins §7.1). Move it to skills/<name>/SKILL.md.',
  },
  'skill.file-name-case': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'The skill file must be named exactly SKILL.md (Agent Plugins §7.1); a client does not fall back to skill.md or other spellings.',
  },
  'skill.not-utf8': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'SKILL.md must be UTF-8 text (Agent Skills: SKILL.md format). The skill is skipped.',
  },
  'skill.bom': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'SKILL.md must start with the "---" line of its frontmatter; a byte order mark before it hides the frontmatter from the reference validator (Agent Skills: SKILL.md format). The skill is skipped.',
  },
  'skill.frontmatter-missing': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'SKILL.md must start with YAML frontmatter: a first line "---" (Agent Skills: SKILL.md format). The skill is skipped.',
  },
  'skill.frontmatter-unterminated': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'The frontmatter of SKILL.md must be closed by a line "---" (Agent Skills: SKILL.md format). The skill is skipped.',
  },
  'skill.frontmatter-invalid-yaml': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'The frontmatter must be plain YAML: no explicit tags, no collection keys, a single document (Agent Skills: frontmatter). A client skips a skill whose YAML it cannot parse.',
  },
  'skill.frontmatter-too-large': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'The frontmatter is over 32 KiB: it is not parsed, so that a hostile SKILL.md cannot exhaust the memory of the process that reads it, and a validator or client with a smaller bound would refuse it too. Real frontmatter holds a few fields (Agent Skills: frontmatter). The skill is skipped.',
  },
  'skill.frontmatter-too-deep': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'The frontmatter nests lists or maps more than 64 deep: it is refused before it is parsed, as such nesting only serves to exhaust a parser; the fields of Agent Skills frontmatter nest two deep at most. The skill is skipped.',
  },
  'skill.frontmatter-too-complex': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'The frontmatter expands aliases past 100 uses or 100,000 values (an alias bomb): it is refused, not expanded, as a validator that expanded it would exhaust its memory (Agent Skills: frontmatter). The skill is skipped.',
  },
  'skill.frontmatter-duplicate-key': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'A frontmatter key may appear only once: YAML readers disagree on which value wins (Agent Skills: frontmatter). The skill is skipped.',
  },
  'skill.frontmatter-not-mapping': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'The frontmatter must be a YAML mapping of field names to values (Agent Skills: frontmatter). The skill is skipped.',
  },
  'skill.field-not-string': {
    rule: 'AR9O1',
    severity: 'error',
    text:
      'name, description, license and compatibility must be strings (Agent Skills: frontmatter fields). A number, boolean, null, list ' +
      'or map is refused, because ordinary YAML readers and the strict reference reader would load different values; quote it.',
  },
  'skill.name-missing': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'name is required (Agent Skills: name field). The skill is skipped.',
  },
  'skill.name-invalid': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'name must be 1-64 characters from a-z, 0-9 and "-", neither start nor end with "-", and hold no "--" (Agent Skills: name field). The skill is skipped.',
  },
  'skill.name-mismatch': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'name must equal the name of the skill directory (Agent Skills: name field). The skill is not packaged and is skipped on read.',
  },
  'skill.description-missing': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'description is required and must not be empty or only whitespace (Agent Skills: description field). The skill is not packaged and is skipped on read.',
  },
  'skill.description-too-long': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'description must be at most 1024 characters (Agent Skills: description field). The skill is skipped.',
  },
  'skill.description-angle-brackets': {
    rule: 'AR9O1',
    severity: 'warning',
    text: 'description holds "<" or ">": the reference validator accepts it, Anthropic\'s quick validator rejects it. The skill is packaged.',
  },
  'skill.compatibility-empty': {
    rule: 'AR9O1',
    severity: 'warning',
    text: 'compatibility is empty: the reference validator accepts it, some validators reject it; leave the field out instead (Agent Skills: compatibility field). The skill is packaged.',
  },
  'skill.compatibility-too-long': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'compatibility must be at most 500 characters (Agent Skills: compatibility field). The skill is skipped.',
  },
  'skill.metadata-invalid': {
    rule: 'AR9O1',
    severity: 'error',
    text: 'metadata must be a map from string keys to string values; a list or map in its place or as a value is refused (Agent Skills: metadata field). The skill is skipped.',
  },
  'skill.metadata-value-not-string': {
    rule: 'AR9O1',
    severity: 'warning',
    text:
      'A metadata value is a number, boolean or null: the strict reference reader loads it as a string, ordinary YAML readers do not ' +
      '(1.0 becomes 1); quote it (Agent Skills: metadata field). The skill is packaged.',
  },
  'skill.allowed-tools-invalid': {
    rule: 'AR9O1',
    severity: 'warning',
    text: 'allowed-tools is experimental and must be a space-separated string (Agent Skills: allowed-tools field); other forms are read differently by each client. The skill is packaged.',
  },
  'skill.unknown-field': {
    rule: 'AR9O1',
    severity: 'warning',
    text:
      'The frontmatter key is not an Agent Skills field. The reference validator rejects it, while clients such as Claude Code define ' +
      'their own keys (user-invocable, argument-hint, ...); the skill is packaged unchanged and clients that do not know the key ignore it.',
  },
} as const satisfies Record<string, FindingCodeInfo>);

export type SkillFindingCode = keyof typeof SKILL_FINDING_CODES;
