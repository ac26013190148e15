/**
 * Findings: what a check reports about a package, each tied to one AR9O rule. A check never
 * throws on bad input; it returns findings, and its caller decides (validate --strict fails
 * on any error, publish stops at the first one).
 */

import { BUILD_FINDING_CODES } from './build/codes.js';
import { BUNDLE_FINDING_CODES } from './bundle/codes.js';
import { EXTENSION_FINDING_CODES } from './extensions/codes.js';
import { MCP_FINDING_CODES } from './mcp/codes.js';
import { READ_FINDING_CODES } from './read/codes.js';
import { RUNTIME_FINDING_CODES } from './runtimes/codes.js';
import { SECRET_FINDING_CODES } from './secrets/codes.js';
import { SKILL_FINDING_CODES } from './skills/codes.js';
import { UPLOAD_FINDING_CODES } from './upload/codes.js';
import { VALIDATE_FINDING_CODES } from './validate/codes.js';
import { byteOrder } from './text.js';

export type Severity = 'error' | 'warning' | 'info';

export const RULES = ['AR9O0', 'AR9O1', 'AR9O2', 'AR9O3', 'AR9O4', 'AR9O5'] as const;
export type Rule = (typeof RULES)[number];

export interface Finding {
  /** One code per failure kind, a key of FINDING_CODES. */
  code: string;
  rule: Rule;
  /**
   * error: a conformant client rejects the plugin or skips the component;
   * warning: a client reports and ignores the value, the rest still loads;
   * info: a lossless normalization, nothing a client would see changes.
   */
  severity: Severity;
  /** The file and a JSON pointer into it, e.g. `plugin.json#/author/name`. */
  path: string;
  /** What is wrong. Never quotes a value from the package: it may hold a credential. */
  message: string;
}

/** The AR9O rules as the product documents them (`validate --explain`). */
export const RULE_TEXT: Readonly<Record<Rule, string>> = Object.freeze({
  AR9O0: 'plugin.json is missing or invalid, the spec is unsupported, or an extension namespace is invalid',
  AR9O1: 'a skill breaks the Agent Skills rules (name, description, frontmatter) or is not at skills/<name>/SKILL.md',
  AR9O2: 'mcp.json or a server entry fails the schema or the rules for command, url and headers',
  AR9O3: 'an unsupported ${VAR} placeholder',
  AR9O4: 'a field or server that cannot be packaged was left out',
  AR9O5: 'a path or link that resolves outside the plugin root, or a file that cannot be read',
});

export interface FindingCodeInfo {
  rule: Rule;
  severity: Severity;
  /** The rule in one or two sentences, with the spec section it comes from. */
  text: string;
}

/**
 * The finding codes of the plugin.json and mcp.json version checks. A finding's rule and
 * severity come from its table, so a code cannot be reported with two different meanings.
 */
export const MANIFEST_FINDING_CODES = Object.freeze({
  'plugin.not-object': {
    rule: 'AR9O0',
    severity: 'error',
    text: 'plugin.json must hold a JSON object (§5.2). The plugin is rejected.',
  },
  'plugin.schema-missing': {
    rule: 'AR9O0',
    severity: 'error',
    text: 'plugin.json must have a $schema naming the Agent Plugins version it targets (§5.2, §5.3). The plugin is rejected.',
  },
  'plugin.schema-unsupported': {
    rule: 'AR9O0',
    severity: 'error',
    text:
      'plugin.json $schema must be exactly https://agent-plugins.org/schemas/1.0.0/plugin.schema.json or ' +
      'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json; a client rejects a version it does not support (§5.2).',
  },
  'plugin.unknown-field': {
    rule: 'AR9O0',
    severity: 'warning',
    text: 'plugin.json is closed: a top-level field the targeted version does not define is reported and ignored, and the plugin still loads (§5.2, §11.3).',
  },
  'plugin.extensions-not-object': {
    rule: 'AR9O0',
    severity: 'warning',
    text: 'extensions must be an object; any other value is reported and ignored, and the plugin still loads (§8.1).',
  },
  'plugin.schema-violation': {
    rule: 'AR9O0',
    severity: 'error',
    text: 'A field of plugin.json has the wrong type or breaks a schema constraint. Any such violation is fatal: the plugin is rejected (§5.2, §5.3, §11.3).',
  },
  'plugin.name-invalid': {
    rule: 'AR9O0',
    severity: 'error',
    text: 'name must be 1-64 characters from a-z, 0-9, "-" and ".", start and end with a letter or digit, and hold no "--" or ".." (§5.5). The plugin is rejected.',
  },
  'plugin.extension-namespace-invalid': {
    rule: 'AR9O0',
    severity: 'error',
    text:
      'Agent Plugins 1.1.0: every key of extensions must be a reverse-domain namespace: two or more dot-separated labels of ' +
      'a-z, 0-9 and "-", each 1-63 characters, starting and ending with a letter or digit, the first label starting with a ' +
      'letter (com.openai, com.anthropic.claude-code). Any other key breaks §8/§8.1, and the 1.1.0 §5.2 makes every manifest ' +
      'violation it does not list as non-fatal reject the plugin.',
  },
  'plugin.extension-namespace-ignored': {
    rule: 'AR9O0',
    severity: 'warning',
    text:
      'Agent Plugins 1.0.0: a key of extensions that is not a reverse-domain namespace (com.example.client) breaks §8, but ' +
      'not the schema, which puts no pattern on extension keys; §5.2 makes only schema violations fatal. No client ' +
      'implements such a namespace, so the entry is reported and ignored (§8.1, §11.1 item 3) and the plugin still loads. ' +
      'A build does not package it.',
  },
  'plugin.author-empty': {
    rule: 'AR9O4',
    severity: 'info',
    text: 'An author object with no fields carries nothing; it is omitted from the manifest.',
  },
  'plugin.icon-not-plugin-relative': {
    rule: 'AR9O0',
    severity: 'warning',
    text:
      'presentation.icon must be a plugin-relative path: it starts with "./" and has no ".." segment or backslash (§4.1, §5.7.2). ' +
      'Any other string is ignored and the plugin still loads; a non-string icon is a schema violation.',
  },
  'mcp.not-object': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json must hold a JSON object (§7.2.1). MCP is disabled for the plugin; other components still load (§7.2.2).',
  },
  'mcp.schema-missing': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json must have a $schema naming its Agent Plugins version (§7.2.1). MCP is disabled for the plugin; other components still load (§7.2.2).',
  },
  'mcp.schema-unsupported': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json $schema must be the mcp.schema.json identifier of a supported version (§7.2.1). MCP is disabled for the plugin; other components still load (§7.2.2).',
  },
  'mcp.spec-mismatch': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json must target the same Agent Plugins version as plugin.json (§10.1). MCP is disabled for the plugin; other components still load (§7.2.2).',
  },
} as const satisfies Record<string, FindingCodeInfo>);

/**
 * Every finding code this package emits: the union of each module's table (skills, paths,
 * bundled files, …), which keep their own so each module owns its codes. Codes are
 * prefixed by module, so the tables never share a key.
 */
export const FINDING_CODES = Object.freeze({
  ...MANIFEST_FINDING_CODES,
  ...SKILL_FINDING_CODES,
  ...READ_FINDING_CODES,
  ...BUNDLE_FINDING_CODES,
  ...MCP_FINDING_CODES,
  ...EXTENSION_FINDING_CODES,
  ...RUNTIME_FINDING_CODES,
  ...SECRET_FINDING_CODES,
  ...BUILD_FINDING_CODES,
  ...VALIDATE_FINDING_CODES,
  ...UPLOAD_FINDING_CODES,
});

export type FindingCode = keyof typeof MANIFEST_FINDING_CODES;

/** A finding of the manifest checks for `code`, with the rule and severity the table gives it. */
export function finding(code: FindingCode, path: string, message: string): Finding {
  return findingFrom(MANIFEST_FINDING_CODES, code, path, message);
}

/**
 * A finding for `code` of a module's own table (skills, MCP servers, paths each keep theirs;
 * FINDING_CODES is their union, so `explain` knows every code).
 */
export function findingFrom<T extends Record<string, FindingCodeInfo>>(
  table: T,
  code: keyof T & string,
  path: string,
  message: string,
): Finding {
  const info = table[code] as FindingCodeInfo;
  return { code, rule: info.rule, severity: info.severity, path, message };
}

/**
 * The rule text for an AR9O code or a finding code (prefixed with its rule), or undefined
 * for a code this package does not define.
 */
export function explain(code: string): string | undefined {
  if (Object.hasOwn(RULE_TEXT, code)) return RULE_TEXT[code as Rule];
  if (!Object.hasOwn(FINDING_CODES, code)) return undefined;
  const info: FindingCodeInfo = FINDING_CODES[code as FindingCode];
  return `${info.rule} (${info.severity}): ${info.text}`;
}

/** The findings sorted by path, then code, then message, in byte order. A new array. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) => byteOrder(a.path, b.path) || byteOrder(a.code, b.code) || byteOrder(a.message, b.message),
  );
}
