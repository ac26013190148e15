import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Finding, sortFindings } from '../src/findings.js';
import {
  SKILL_FINDING_CODES,
  type SkillFindingCode,
  addProvenanceHeader,
  checkSkill,
  parseFrontmatter,
  removeProvenanceHeader,
  selectSkills,
  skillNameProblem,
} from '../src/skills/index.js';

// Every finding any test here produces, so the last block can assert each code is exercised.
const produced: Finding[] = [];
const bytes = (text: string) => new TextEncoder().encode(text);
const skillMd = (frontmatter: string, body = '# Deploy\n\nSteps.\n') => bytes(`---\n${frontmatter}---\n${body}`);
const VALID = 'name: deploy\ndescription: Deploys the service.\n';
const check = (dir: string, file: Uint8Array) => {
  const result = checkSkill(dir, file);
  produced.push(...result.findings);
  return result;
};
const codes = (findings: readonly Finding[]) => findings.map((f) => `${f.code} ${f.path}`);
const codeList = (findings: readonly Finding[]) => findings.map((f) => f.code);

describe('checkSkill: a valid skill', () => {
  it('a skill with name and description is accepted with no findings and its frontmatter', () => {
    expect(check('deploy', skillMd(VALID))).toEqual({
      accepted: true,
      frontmatter: { name: 'deploy', description: 'Deploys the service.' },
      findings: [],
    });
  });

  it('every optional field in its valid form is accepted with no findings', () => {
    const result = check(
      'deploy',
      skillMd(
        `${VALID}license: Apache-2.0\ncompatibility: Needs git and network access.\nmetadata:\n  author: acme\n  version: "1.0"\nallowed-tools: Bash(git:*) Read\n`,
      ),
    );
    expect(result.findings).toEqual([]);
    expect(result.accepted).toBe(true);
    expect(result.frontmatter?.metadata).toEqual({ author: 'acme', version: '1.0' });
  });

  it('the input bytes are not changed', () => {
    const input = skillMd(`${VALID}metadata: {a: 1}\n`);
    const copy = input.slice();
    check('deploy', input);
    expect(input).toEqual(copy);
  });
});

describe('checkSkill: the name rule (1-64 of a-z, 0-9, "-"; no "-" at an end; no "--")', () => {
  const long64 = 'a'.repeat(64);
  const long65 = 'a'.repeat(65);
  it.each([
    ['a single letter', 'a'],
    ['letters, digits and single hyphens', 'pdf-processing-2'],
    ['digits only', '123x'],
    ['exactly 64 characters', long64],
  ])('%s is a valid name', (_label, name) => {
    expect(skillNameProblem(name)).toBeUndefined();
    const result = check(name, skillMd(`name: "${name}"\ndescription: d\n`));
    expect(result.findings).toEqual([]);
    expect(result.accepted).toBe(true);
  });

  it.each([
    ['an empty name', '', 'is empty'],
    ['65 characters', long65, 'is longer than 64 characters'],
    ['an upper-case letter', 'Deploy', 'may hold only lower-case ASCII letters a-z, digits and "-"'],
    ['an underscore', 'a_b', 'may hold only lower-case ASCII letters a-z, digits and "-"'],
    ['a dot', 'a.b', 'may hold only lower-case ASCII letters a-z, digits and "-"'],
    ['a space', 'a b', 'may hold only lower-case ASCII letters a-z, digits and "-"'],
    ['a leading hyphen', '-deploy', 'must not start or end with "-"'],
    ['a trailing hyphen', 'deploy-', 'must not start or end with "-"'],
    ['a double hyphen', 'de--ploy', 'contains "--"'],
    // Chosen: ASCII only, although the reference validator accepts letters after NFKC.
    ['a Unicode letter (chosen: ASCII only)', 'café', 'may hold only lower-case ASCII letters a-z, digits and "-"'],
    [
      'a letter NFKC maps to ASCII (chosen: ASCII only)',
      'ｄeploy',
      'may hold only lower-case ASCII letters a-z, digits and "-"',
    ],
    [
      'a Cyrillic look-alike (chosen: ASCII only)',
      'dеploy',
      'may hold only lower-case ASCII letters a-z, digits and "-"',
    ],
  ])('a name with %s is refused (skill.name-invalid, error)', (_label, name, message) => {
    expect(skillNameProblem(name)).toBe(message);
    // The directory has the same name, so only the name rule can fail.
    const result = check(name, skillMd(`name: "${name}"\ndescription: d\n`));
    expect(result.accepted).toBe(false);
    expect(result.findings).toEqual([
      {
        code: 'skill.name-invalid',
        rule: 'AR9O1',
        severity: 'error',
        path: `skills/${name}/SKILL.md#/frontmatter/name`,
        message,
      },
    ]);
  });

  it('the length is counted in characters, not UTF-16 units', () => {
    expect(skillNameProblem('😀'.repeat(40))).toBe('may hold only lower-case ASCII letters a-z, digits and "-"');
    expect(skillNameProblem('a'.repeat(64))).toBeUndefined();
  });

  it.each([
    ['another name', 'name: release\n'],
    ['a different case', 'name: Deploy\n'],
    ['a trailing space in quotes', 'name: "deploy "\n'],
  ])('a name that differs from the directory by %s is not packaged (skill.name-mismatch, error)', (_label, name) => {
    const result = check('deploy', skillMd(`${name}description: d\n`));
    expect(result.accepted).toBe(false);
    expect(codeList(result.findings)).toContain('skill.name-mismatch');
    expect(result.findings.find((f) => f.code === 'skill.name-mismatch')).toMatchObject({
      severity: 'error',
      path: 'skills/deploy/SKILL.md#/frontmatter/name',
    });
  });

  it('a missing name is refused (skill.name-missing, error)', () => {
    const result = check('deploy', skillMd('description: d\n'));
    expect(result.accepted).toBe(false);
    expect(codes(result.findings)).toEqual(['skill.name-missing skills/deploy/SKILL.md#/frontmatter/name']);
  });
});

describe('checkSkill: the description rule (required, 1-1024 characters, not blank)', () => {
  it.each([
    ['missing', 'name: deploy\n', 'skill.description-missing', 'is required; the skill is not packaged'],
    ['empty', 'name: deploy\ndescription: ""\n', 'skill.description-missing', 'is empty; the skill is not packaged'],
    [
      'only whitespace',
      'name: deploy\ndescription: "  \\t "\n',
      'skill.description-missing',
      'is empty; the skill is not packaged',
    ],
    [
      'null (an empty value)',
      'name: deploy\ndescription:\n',
      'skill.field-not-string',
      'must be a string, not null; quote the value',
    ],
    [
      '1025 characters',
      `name: deploy\ndescription: ${'x'.repeat(1025)}\n`,
      'skill.description-too-long',
      'is 1025 characters, more than 1024',
    ],
  ] as const)('a description that is %s is not packaged', (_label, frontmatter, code, message) => {
    const result = check('deploy', skillMd(frontmatter));
    expect(result.accepted).toBe(false);
    expect(result.findings).toEqual([
      { code, rule: 'AR9O1', severity: 'error', path: 'skills/deploy/SKILL.md#/frontmatter/description', message },
    ]);
  });

  it('a description of exactly 1024 characters, counted in code points, is accepted', () => {
    expect(check('deploy', skillMd(`name: deploy\ndescription: ${'x'.repeat(1024)}\n`)).findings).toEqual([]);
    expect(check('deploy', skillMd(`name: deploy\ndescription: ${'😀'.repeat(1024)}\n`)).findings).toEqual([]);
  });

  it('"<" or ">" in the description is packaged with a warning (chosen: the reference accepts it)', () => {
    const result = check('deploy', skillMd('name: deploy\ndescription: Use for <xml> files\n'));
    expect(result.accepted).toBe(true);
    expect(result.findings).toMatchObject([
      {
        code: 'skill.description-angle-brackets',
        severity: 'warning',
        path: 'skills/deploy/SKILL.md#/frontmatter/description',
      },
    ]);
  });
});

describe('checkSkill: optional fields', () => {
  it.each<[string, string, boolean, SkillFindingCode[]]>([
    ['license that is a string', 'license: Proprietary. See LICENSE.txt\n', true, []],
    ['license that is a number', 'license: 2\n', false, ['skill.field-not-string']],
    ['license that is a list', 'license: [MIT]\n', false, ['skill.field-not-string']],
    ['compatibility of 500 characters', `compatibility: ${'c'.repeat(500)}\n`, true, []],
    ['compatibility of 501 characters', `compatibility: ${'c'.repeat(501)}\n`, false, ['skill.compatibility-too-long']],
    // Chosen: an empty compatibility is packaged with a warning (the reference accepts it).
    ['an empty compatibility (chosen: warning)', 'compatibility: ""\n', true, ['skill.compatibility-empty']],
    ['a blank compatibility (chosen: warning)', 'compatibility: "   "\n', true, ['skill.compatibility-empty']],
    ['compatibility that is a map', 'compatibility: {os: linux}\n', false, ['skill.field-not-string']],
    ['metadata mapping strings to strings', 'metadata:\n  team: infra\n', true, []],
    ['an empty metadata map', 'metadata: {}\n', true, []],
    ['metadata that is a list', 'metadata: [a, b]\n', false, ['skill.metadata-invalid']],
    ['metadata that is a string', 'metadata: team\n', false, ['skill.metadata-invalid']],
    ['a metadata value that is a map', 'metadata:\n  team: {name: infra}\n', false, ['skill.metadata-invalid']],
    ['a metadata value that is a list', 'metadata:\n  tags: [a]\n', false, ['skill.metadata-invalid']],
    // Chosen: unquoted scalars in metadata are packaged with a warning (the reference reads them as strings).
    [
      'a metadata value that is a number (chosen: warning)',
      'metadata:\n  version: 1.0\n',
      true,
      ['skill.metadata-value-not-string'],
    ],
    [
      'a metadata value that is a boolean (chosen: warning)',
      'metadata:\n  beta: true\n',
      true,
      ['skill.metadata-value-not-string'],
    ],
    [
      'a metadata value that is null (chosen: warning)',
      'metadata:\n  owner:\n',
      true,
      ['skill.metadata-value-not-string'],
    ],
    ['allowed-tools as a space-separated string', 'allowed-tools: Read Grep\n', true, []],
    // Chosen: allowed-tools is experimental; another form is packaged with a warning.
    [
      'allowed-tools as a list (chosen: warning)',
      'allowed-tools: [Read, Grep]\n',
      true,
      ['skill.allowed-tools-invalid'],
    ],
  ])('%s: accepted=%s', (_label, extra, accepted, expected) => {
    const result = check('deploy', skillMd(`${VALID}${extra}`));
    expect(codeList(result.findings)).toEqual(expected);
    expect(result.accepted).toBe(accepted);
  });

  it('a metadata finding points at the key inside metadata', () => {
    const result = check('deploy', skillMd(`${VALID}metadata:\n  a/b: 1\n`));
    expect(codes(result.findings)).toEqual([
      'skill.metadata-value-not-string skills/deploy/SKILL.md#/frontmatter/metadata/a~1b',
    ]);
  });
});

describe('checkSkill: unknown frontmatter keys (chosen: warning, packaged unchanged)', () => {
  it.each([
    ['user-invocable: false\n', 'user-invocable'],
    ['argument-hint: "[file]"\n', 'argument-hint'],
    ['version: "1"\n', 'version'],
    ['__proto__: {polluted: true}\n', '__proto__'],
  ])('%s is a warning and the skill is packaged', (extra, key) => {
    const result = check('deploy', skillMd(`${VALID}${extra}`));
    expect(result.accepted).toBe(true);
    expect(result.findings).toEqual([
      {
        code: 'skill.unknown-field',
        rule: 'AR9O1',
        severity: 'warning',
        path: `skills/deploy/SKILL.md#/frontmatter/${key}`,
        message: 'is not an Agent Skills field; clients that do not know it ignore it',
      },
    ]);
    expect(Object.hasOwn(result.frontmatter ?? {}, key)).toBe(true);
  });

  it('a __proto__ key stays data and never becomes the prototype', () => {
    const result = check('deploy', skillMd(`${VALID}__proto__: {polluted: true}\n`));
    expect(Object.getPrototypeOf(result.frontmatter)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('checkSkill: YAML scalars (chosen: YAML 1.2 core types; a string field must be a string)', () => {
  it.each([
    ['a number as name', '123', 'name: 123\ndescription: d\n', '/name'],
    ['a boolean as name', 'true', 'name: true\ndescription: d\n', '/name'],
    ['a float as description', 'deploy', 'name: deploy\ndescription: 1.0\n', '/description'],
    ['a map as description', 'deploy', 'name: deploy\ndescription: {a: b}\n', '/description'],
  ])('%s is refused (skill.field-not-string, error)', (_label, dir, frontmatter, pointer) => {
    const result = check(dir, skillMd(frontmatter));
    expect(result.accepted).toBe(false);
    expect(codes(result.findings)).toEqual([`skill.field-not-string skills/${dir}/SKILL.md#/frontmatter${pointer}`]);
  });

  it.each([
    ['a quoted number as name', '123', 'name: "123"\ndescription: d\n'],
    ['a date-like description, a string in YAML 1.2', 'deploy', 'name: deploy\ndescription: 2024-01-01\n'],
    ['yes as description, a string in YAML 1.2', 'deploy', 'name: deploy\ndescription: yes\n'],
  ])('%s is accepted', (_label, dir, frontmatter) => {
    const result = check(dir, skillMd(frontmatter));
    expect(result.findings).toEqual([]);
    expect(typeof result.frontmatter?.description).toBe('string');
  });
});

describe('parseFrontmatter and checkSkill: the frontmatter block', () => {
  const FILE = 'skills/deploy/SKILL.md';
  it.each<[string, string | Uint8Array, SkillFindingCode[]]>([
    ['an empty file', '', ['skill.frontmatter-missing']],
    ['Markdown without frontmatter', '# Deploy\n', ['skill.frontmatter-missing']],
    ['frontmatter not on the first line', `\n---\n${VALID}---\n`, ['skill.frontmatter-missing']],
    ['an opening line "--- " with a trailing space', `--- \n${VALID}---\n`, ['skill.frontmatter-missing']],
    ['an opening line "----"', `----\n${VALID}----\n`, ['skill.frontmatter-missing']],
    ['only the opening line', '---', ['skill.frontmatter-unterminated']],
    ['no closing line', `---\n${VALID}# Deploy\n`, ['skill.frontmatter-unterminated']],
    ['a closing line "---x" only', `---\n${VALID}---x\n`, ['skill.frontmatter-unterminated']],
    ['empty frontmatter', '---\n---\nbody\n', ['skill.frontmatter-not-mapping']],
    ['a list', '---\n- name\n- deploy\n---\n', ['skill.frontmatter-not-mapping']],
    ['a scalar', '---\ndeploy\n---\n', ['skill.frontmatter-not-mapping']],
    ['a duplicate key', `---\n${VALID}name: deploy\n---\n`, ['skill.frontmatter-duplicate-key']],
    [
      'a duplicate key inside metadata',
      `---\n${VALID}metadata:\n  a: x\n  a: y\n---\n`,
      ['skill.frontmatter-duplicate-key'],
    ],
    [
      'keys 1 and "1", one key once read as strings',
      `---\n${VALID}1: a\n"1": b\n---\n`,
      ['skill.frontmatter-duplicate-key'],
    ],
    [
      'invalid YAML (an unclosed flow list)',
      '---\nname: [deploy\ndescription: d\n---\n',
      ['skill.frontmatter-invalid-yaml'],
    ],
    [
      'invalid YAML (a colon in a plain value)',
      '---\nname: deploy\ndescription: Use when: deploying\n---\n',
      ['skill.frontmatter-invalid-yaml'],
    ],
    ['an explicit known tag (!!binary)', `---\n${VALID}icon: !!binary eA==\n---\n`, ['skill.frontmatter-invalid-yaml']],
    ['a custom tag', `---\n${VALID}run: !shell rm -rf /\n---\n`, ['skill.frontmatter-invalid-yaml']],
    ['a list as a key', `---\n${VALID}? [a, b]\n: c\n---\n`, ['skill.frontmatter-invalid-yaml']],
    ['a second YAML document', `---\n${VALID}...\nname: other\n---\n`, ['skill.frontmatter-invalid-yaml']],
    ['invalid UTF-8', new Uint8Array([...bytes(`---\n${VALID}`), 0xff, 0x0a, ...bytes('---\n')]), ['skill.not-utf8']],
    ['a byte order mark before the opening line', `\uFEFF---\n${VALID}---\n`, ['skill.bom']],
    ['frontmatter over 32 KiB', `---\n${VALID}x: "${'y'.repeat(32 * 1024)}"\n---\n`, ['skill.frontmatter-too-large']],
    [
      'lists nested 65 deep',
      `---\n${VALID}x: ${'['.repeat(65)}${']'.repeat(65)}\n---\n`,
      ['skill.frontmatter-too-deep'],
    ],
  ])('a file with %s is not packaged', (_label, input, expected) => {
    const file = typeof input === 'string' ? bytes(input) : input;
    const result = check('deploy', file);
    expect(result.accepted).toBe(false);
    expect(codeList(result.findings)).toEqual(expected);
    expect(result.findings.every((f) => f.rule === 'AR9O1' && f.severity === 'error' && f.path.startsWith(FILE))).toBe(
      true,
    );
  });

  it('a YAML error names the file line and column, counting the opening "---" as line 1', () => {
    const { problems } = parseFrontmatter(bytes('---\nname: deploy\ndescription: a: b\n---\n'), FILE);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toMatch(/\(line 3, column \d+\)$/);
  });

  it('a file with a BOM is still parsed, so its other problems are reported too', () => {
    const result = check('deploy', bytes('\uFEFF---\nname: other\ndescription: d\n---\n'));
    expect(codeList(result.findings)).toEqual(['skill.bom', 'skill.name-mismatch']);
  });

  it.each([
    ['CRLF line endings', `---\r\nname: deploy\r\ndescription: Deploys.\r\n---\r\n# Deploy\r\n`, '# Deploy\r\n'],
    ['mixed CRLF and LF line endings', `---\r\nname: deploy\ndescription: Deploys.\r\n---\n# Deploy\n`, '# Deploy\n'],
    ['a closing line at the end of the file with no line ending', `---\nname: deploy\ndescription: Deploys.\n---`, ''],
    [
      'a "---" line in the body',
      `---\nname: deploy\ndescription: Deploys.\n---\nabove\n---\nbelow\n`,
      'above\n---\nbelow\n',
    ],
    ['a YAML comment in the frontmatter', `---\n# a note\nname: deploy # inline\ndescription: Deploys.\n---\n`, ''],
  ])('a file with %s is accepted and the body is kept as written', (_label, text, body) => {
    const parsed = parseFrontmatter(bytes(text), FILE);
    expect(parsed).toEqual({ data: { name: 'deploy', description: 'Deploys.' }, body, problems: [] });
    expect(check('deploy', bytes(text)).accepted).toBe(true);
  });

  it('an alias bomb is refused rather than expanded', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++)
      lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
    const result = check('deploy', skillMd(`${VALID}${lines.join('\n')}\n`));
    expect(result.accepted).toBe(false);
    expect(codeList(result.findings)).toEqual(['skill.frontmatter-too-complex']);
  });
});

describe('checkSkill: messages never quote a frontmatter value', () => {
  // A token in every position a finding can point at; no message or path may repeat it.
  const SECRET = 'sk-live-9f8e7d6c5b4a';
  it.each([
    ['an invalid name', `name: "${SECRET}_X"\ndescription: d\n`],
    ['a name that differs from the directory', `name: ${SECRET}\ndescription: d\n`],
    ['an over-long description', `name: deploy\ndescription: ${SECRET}${'x'.repeat(1100)}\n`],
    ['a description with "<"', `name: deploy\ndescription: <${SECRET}>\n`],
    ['an over-long compatibility', `${VALID}compatibility: ${SECRET}${'x'.repeat(600)}\n`],
    ['a metadata value that is a list', `${VALID}metadata:\n  token: [${SECRET}]\n`],
    ['a metadata that is a string', `${VALID}metadata: ${SECRET}\n`],
    ['allowed-tools as a map', `${VALID}allowed-tools: {x: ${SECRET}}\n`],
    ['a license that is a map', `${VALID}license: {key: ${SECRET}}\n`],
    ['invalid YAML on the line holding the value', `name: deploy\ndescription: token: ${SECRET}\n`],
    ['a duplicate key holding the value', `${VALID}token: ${SECRET}\ntoken: ${SECRET}\n`],
    ['a custom tag on the value', `${VALID}token: !secret ${SECRET}\n`],
  ])('%s', (_label, frontmatter) => {
    const result = check('deploy', skillMd(frontmatter));
    expect(result.findings.length).toBeGreaterThan(0);
    for (const f of result.findings) {
      expect(f.message).not.toContain('9f8e7d');
      expect(f.path).not.toContain('9f8e7d');
      expect(f.message.length).toBeLessThan(120);
    }
  });
});

describe('selectSkills: only immediate children of skills/ holding SKILL.md are skills', () => {
  it('skills are the immediate child directories holding SKILL.md, sorted in code-point order', () => {
    const result = selectSkills([
      'plugin.json',
      'skills/zeta/SKILL.md',
      'skills/alpha/SKILL.md',
      'skills/alpha/scripts/run.sh',
      'skills/Beta/SKILL.md',
      'skills/alpha/SKILL.md',
      'skills/empty/README.md',
      'other/skills/x/SKILL.md',
    ]);
    expect(result).toEqual({ skills: ['Beta', 'alpha', 'zeta'], findings: [] });
  });

  it.each<[string, string[], string[], string[]]>([
    ['a SKILL.md directly in skills/', ['skills/SKILL.md'], [], ['skill.not-in-directory skills/SKILL.md']],
    [
      'a SKILL.md two levels down, under a directory that is no skill',
      ['skills/group/deploy/SKILL.md'],
      [],
      ['skill.nested skills/group/deploy/SKILL.md'],
    ],
    [
      'a SKILL.md deeper inside a skill (a file it carries)',
      ['skills/creator/SKILL.md', 'skills/creator/templates/x/SKILL.md'],
      ['creator'],
      [],
    ],
    [
      'a lower-case skill.md (Agent Plugins requires SKILL.md)',
      ['skills/deploy/skill.md'],
      [],
      ['skill.file-name-case skills/deploy/skill.md'],
    ],
    ['a Skill.md beside a SKILL.md', ['skills/deploy/SKILL.md', 'skills/deploy/Skill.md'], ['deploy'], []],
    [
      'paths with empty, "." or ".." segments',
      ['skills//SKILL.md', 'skills/./SKILL.md', 'skills/../SKILL.md', 'skills/a/../SKILL.md'],
      [],
      [],
    ],
  ])('%s', (_label, paths, skills, expected) => {
    const result = selectSkills(paths);
    produced.push(...result.findings);
    expect(result.skills).toEqual(skills);
    expect(codes(result.findings)).toEqual(expected);
    expect(result.findings.every((f) => f.rule === 'AR9O1' && f.severity === 'error')).toBe(true);
  });

  it('accepts any iterable, once', () => {
    function* paths() {
      yield 'skills/b/SKILL.md';
      yield 'skills/a/SKILL.md';
    }
    expect(selectSkills(paths()).skills).toEqual(['a', 'b']);
  });
});

describe('provenance header', () => {
  const SOURCE = { generator: 'ai-rulez', sourcePath: '.ai-rulez/skills/deploy/SKILL.md' };
  const text = (b: Uint8Array) => new TextDecoder().decode(b);

  it('is a YAML comment line right after the opening "---"', () => {
    expect(text(addProvenanceHeader(skillMd(VALID), SOURCE))).toBe(
      `---\n# Generated by "ai-rulez" from ".ai-rulez/skills/deploy/SKILL.md". DO NOT EDIT.\n${VALID}---\n# Deploy\n\nSteps.\n`,
    );
  });

  it('keeps the file a valid SKILL.md with the same frontmatter and body', () => {
    const plain = skillMd(`${VALID}metadata:\n  team: infra\n`);
    const headed = addProvenanceHeader(plain, SOURCE);
    expect(check('deploy', headed)).toEqual(check('deploy', plain));
    expect(parseFrontmatter(headed, 'f').body).toBe(parseFrontmatter(plain, 'f').body);
  });

  it('takes the line ending of the opening line, so a CRLF file stays CRLF', () => {
    const crlf = bytes(`---\r\n${VALID.replaceAll('\n', '\r\n')}---\r\n`);
    const headed = text(addProvenanceHeader(crlf, SOURCE));
    expect(headed.split('\r\n')[1]).toMatch(/^# Generated by /);
    expect(headed.replaceAll('\r\n', '')).not.toContain('\n');
  });

  it('never holds "---", non-ASCII or a line break, whatever the source', () => {
    const source = { generator: 'gen---x\u2028', sourcePath: 'a---b\n---\r\né😀\ud800"\\' };
    const headed = text(addProvenanceHeader(bytes('---\n'), source));
    const line = headed.slice(4, -1);
    expect(line).not.toContain('---');
    expect(line).toMatch(/^[\x20-\x7e]+$/);
    expect(removeProvenanceHeader(bytes(headed)).header).toEqual(source);
  });

  it('remove returns the header it took off', () => {
    expect(removeProvenanceHeader(addProvenanceHeader(skillMd(VALID), SOURCE))).toEqual({
      bytes: skillMd(VALID),
      header: SOURCE,
    });
  });

  it.each([
    ['no frontmatter', '# Deploy\n'],
    ['a BOM before the frontmatter', `\uFEFF---\n${VALID}---\n`],
    ['an ordinary YAML comment', `---\n# Generated by hand\n${VALID}---\n`],
    [
      'a header spelled differently from what add writes',
      `---\n# Generated by "a\\u002db" from "x". DO NOT EDIT.\n${VALID}---\n`,
    ],
    [
      'a header with the wrong line ending for the file',
      `---\r\n# Generated by "g" from "s". DO NOT EDIT.\n${VALID}---\n`,
    ],
    ['a header that is the last line with no line ending', '---\n# Generated by "g" from "s". DO NOT EDIT.'],
    ['an empty file', ''],
  ])('a file with %s has no header and is returned unchanged', (_label, input) => {
    const file = bytes(input);
    const removed = removeProvenanceHeader(file);
    expect(removed.bytes).toBe(file);
    expect(removed.header).toBeUndefined();
  });

  it('add returns a file without frontmatter unchanged', () => {
    const file = bytes('# Deploy\n');
    expect(addProvenanceHeader(file, SOURCE)).toBe(file);
  });

  // Inputs biased towards files that open frontmatter or already carry a header.
  const files = fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc
      .tuple(
        fc.constantFrom('---\n', '---\r\n', '---', '--- \n', '\uFEFF---\n'),
        fc.string({ unit: 'binary', maxLength: 64 }),
      )
      .map(([a, b]) => bytes(a + b)),
    fc
      .tuple(fc.constantFrom('---\n', '---\r\n'), fc.uint8Array({ maxLength: 64 }))
      .map(([a, b]) => new Uint8Array([...bytes(a), ...b])),
  );
  const sources = fc.record({
    generator: fc.string({ unit: 'binary', maxLength: 24 }),
    sourcePath: fc.string({ unit: 'binary', maxLength: 48 }),
  });
  const headedFiles = fc.tuple(files, sources).map(([f, s]) => addProvenanceHeader(f, s));

  it('remove(add(x)) is x byte for byte, for every input (property)', () => {
    fc.assert(
      fc.property(fc.oneof(files, headedFiles), sources, (file, source) => {
        const removed = removeProvenanceHeader(addProvenanceHeader(file, source));
        expect(removed.bytes).toEqual(file);
        if (
          removed.bytes.length !== 0 &&
          (text(file.subarray(0, 4)) === '---\n' || text(file.subarray(0, 5)) === '---\r\n')
        ) {
          expect(removed.header).toEqual(source);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('export, import and export again give identical bytes (property)', () => {
    fc.assert(
      fc.property(fc.oneof(files, headedFiles), sources, (file, source) => {
        const exported = addProvenanceHeader(file, source);
        const imported = removeProvenanceHeader(exported).bytes;
        expect(addProvenanceHeader(imported, source)).toEqual(exported);
      }),
      { numRuns: 300 },
    );
  });

  it('removing is idempotent on a file without a header: a second remove changes nothing (property)', () => {
    fc.assert(
      fc.property(files, sources, (file, source) => {
        fc.pre(removeProvenanceHeader(file).header === undefined);
        const once = removeProvenanceHeader(addProvenanceHeader(file, source)).bytes;
        expect(removeProvenanceHeader(once).bytes).toBe(once);
      }),
      { numRuns: 300 },
    );
  });

  it('a second header stacks above the first, and each remove takes one off in order', () => {
    const other = { generator: 'packager', sourcePath: 'build/skills/deploy/SKILL.md' };
    const twice = addProvenanceHeader(addProvenanceHeader(skillMd(VALID), SOURCE), other);
    const first = removeProvenanceHeader(twice);
    expect(first.header).toEqual(other);
    const second = removeProvenanceHeader(first.bytes);
    expect(second).toEqual({ bytes: skillMd(VALID), header: SOURCE });
  });
});

describe('SKILL_FINDING_CODES', () => {
  it('every code is under AR9O1, is named skill.*, and cites the rule or spec section it comes from', () => {
    for (const [code, info] of Object.entries(SKILL_FINDING_CODES)) {
      expect(code).toMatch(/^skill\.[a-z0-9-]+$/);
      expect(info.rule).toBe('AR9O1');
      expect(info.text).toMatch(/Agent Skills|Agent Plugins §|validator/);
    }
  });

  it('every finding produced above has its rule and severity from the table, and every code was produced', () => {
    const seen = new Set<string>();
    for (const f of produced) {
      const info = SKILL_FINDING_CODES[f.code as SkillFindingCode];
      expect(info, f.code).toBeDefined();
      expect([f.rule, f.severity]).toEqual([info.rule, info.severity]);
      seen.add(f.code);
    }
    expect([...seen].sort()).toEqual(Object.keys(SKILL_FINDING_CODES).sort());
  });

  it('findings come back sorted', () => {
    const result = check('deploy', skillMd('description: <x>\nzz: 1\naa: 2\ncompatibility: ""\n'));
    expect(result.findings).toEqual(sortFindings(result.findings));
    expect(result.findings.length).toBe(5);
  });
});
