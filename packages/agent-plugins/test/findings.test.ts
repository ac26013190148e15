import { describe, expect, it } from 'vitest';
import { FINDING_CODES, type Finding, RULES, RULE_TEXT, explain, sortFindings } from '../src/index.js';
import { BUILD_FINDING_CODES } from '../src/build/codes.js';
import { UPLOAD_FINDING_CODES } from '../src/upload/codes.js';
import { BUNDLE_FINDING_CODES } from '../src/bundle/codes.js';
import { EXTENSION_FINDING_CODES } from '../src/extensions/codes.js';
import { MANIFEST_FINDING_CODES } from '../src/findings.js';
import { MCP_FINDING_CODES } from '../src/mcp/codes.js';
import { READ_FINDING_CODES } from '../src/read/codes.js';
import { RUNTIME_FINDING_CODES } from '../src/runtimes/codes.js';
import { SECRET_FINDING_CODES } from '../src/secrets/codes.js';
import { SKILL_FINDING_CODES } from '../src/skills/codes.js';
import { VALIDATE_FINDING_CODES } from '../src/validate/codes.js';

const f = (path: string, code: string, message = 'm'): Finding => ({
  code,
  rule: 'AR9O0',
  severity: 'error',
  path,
  message,
});

describe('explain', () => {
  it.each(RULES.map((rule) => [rule]))('%s is explained with its documented rule text', (rule) => {
    expect(explain(rule)).toBe(RULE_TEXT[rule]);
  });

  it.each(Object.keys(FINDING_CODES).map((code) => [code]))(
    'finding code %s is explained with its rule, severity and text',
    (code) => {
      const info = FINDING_CODES[code as keyof typeof FINDING_CODES];
      expect(explain(code)).toBe(`${info.rule} (${info.severity}): ${info.text}`);
    },
  );

  it.each([['AR9O6'], ['ar9o0'], ['plugin.nope'], [''], ['toString'], ['__proto__']])(
    'an unknown code %j has no explanation',
    (code) => {
      expect(explain(code)).toBeUndefined();
    },
  );

  it('every finding code names a rule from the AR9O table', () => {
    for (const info of Object.values(FINDING_CODES)) expect(RULES).toContain(info.rule);
  });
});

describe('sortFindings', () => {
  it.each([
    ['path first', [f('plugin.json#/b', 'a'), f('plugin.json#/a', 'z')], ['plugin.json#/a', 'plugin.json#/b']],
    ['then code', [f('p', 'plugin.z'), f('p', 'plugin.a')], ['plugin.a', 'plugin.z']],
    ['then message', [f('p', 'c', 'b'), f('p', 'c', 'a')], ['a', 'b']],
    ['byte order, upper case before lower case', [f('p#/a', 'c'), f('p#/B', 'c')], ['p#/B', 'p#/a']],
    ['byte order, a prefix before its extensions', [f('p#/ab', 'c'), f('p#/a', 'c')], ['p#/a', 'p#/ab']],
    // U+FF5E sorts after U+1F600 in UTF-16 code units but before it in UTF-8 bytes.
    ['byte order above U+FFFF', [f('p#/😀', 'c'), f('p#/～', 'c')], ['p#/～', 'p#/😀']],
  ] as const)('sorts by %s', (_rule, input, expected) => {
    const key = (x: Finding) => (_rule === 'then code' ? x.code : _rule === 'then message' ? x.message : x.path);
    expect(sortFindings(input).map(key)).toEqual(expected);
  });

  it('returns a new array and leaves its input unchanged', () => {
    const input = [f('b', 'c'), f('a', 'c')];
    const sorted = sortFindings(input);
    expect(sorted).not.toBe(input);
    expect(input.map((x) => x.path)).toEqual(['b', 'a']);
  });

  it('is total: any order of the same findings sorts the same', () => {
    const all = [f('a', 'x', '2'), f('a', 'x', '1'), f('b', 'a'), f('a', 'y')];
    const expected = sortFindings(all);
    expect(sortFindings([...all].reverse())).toEqual(expected);
  });
});

describe("the union of the modules' code tables", () => {
  it('loses no code: no two modules define the same one', () => {
    const parts = [
      MANIFEST_FINDING_CODES,
      SKILL_FINDING_CODES,
      READ_FINDING_CODES,
      BUNDLE_FINDING_CODES,
      MCP_FINDING_CODES,
      EXTENSION_FINDING_CODES,
      RUNTIME_FINDING_CODES,
      VALIDATE_FINDING_CODES,
      SECRET_FINDING_CODES,
      BUILD_FINDING_CODES,
      UPLOAD_FINDING_CODES,
    ];
    const total = parts.reduce((sum, table) => sum + Object.keys(table).length, 0);
    expect(Object.keys(FINDING_CODES)).toHaveLength(total);
    for (const table of parts) for (const code of Object.keys(table)) expect(explain(code), code).toBeDefined();
  });
});
