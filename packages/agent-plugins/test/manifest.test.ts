import { afterAll, describe, expect, it } from 'vitest';
import {
  FINDING_CODES,
  type Finding,
  type SpecVersion,
  checkMcpManifestVersion,
  checkPluginManifest,
  explain,
  sortFindings,
} from '../src/index.js';
import { MANIFEST_FINDING_CODES } from '../src/findings.js';
import { pluginSchemaId, mcpSchemaId } from '../src/schemas.js';

const V100 = pluginSchemaId('1.0.0');
const V110 = pluginSchemaId('1.1.0');

// Every finding any test here produces, so the last block can assert each one is explained.
const produced: Finding[] = [];
const check = (value: unknown) => {
  const result = checkPluginManifest(value);
  produced.push(...result.findings);
  return result;
};
const checkMcp = (spec: SpecVersion, value: unknown) => {
  const result = checkMcpManifestVersion(spec, value);
  produced.push(...result.findings);
  return result;
};
const codes = (findings: readonly Finding[]) => findings.map((f) => `${f.code} ${f.path}`);

describe('checkPluginManifest: the minimal manifest', () => {
  it.each([
    ['1.0.0', V100],
    ['1.1.0', V110],
  ] as const)('a manifest with only $schema and name loads under %s', (spec, id) => {
    const result = check({ $schema: id, name: 'minimal-plugin' });
    expect(result).toEqual({ spec, manifest: { $schema: id, name: 'minimal-plugin' }, rejected: false, findings: [] });
  });

  it('the full 1.1.0 example from §5.2 loads unchanged', () => {
    const full = {
      $schema: V110,
      name: 'plugin-name',
      presentation: { displayName: 'Plugin Name', icon: './icon.png' },
      version: '1.2.0',
      description: 'Brief plugin description',
      author: { name: 'Author Name', email: 'author@example.com', url: 'https://example.com' },
      homepage: 'https://docs.example.com/plugin',
      repository: 'https://github.com/example/plugin',
      license: 'MIT',
      keywords: ['keyword1', 'keyword2'],
      extensions: { 'com.example.client': { setting: true } },
    };
    expect(check(full)).toEqual({ spec: '1.1.0', manifest: full, rejected: false, findings: [] });
  });

  it('the input is not changed', () => {
    const input = { $schema: V100, name: 'a', author: {}, extra: 1, extensions: 'x' };
    const copy = structuredClone(input);
    check(input);
    expect(input).toEqual(copy);
  });
});

describe('checkPluginManifest: $schema selects the version (§5.2)', () => {
  it.each([
    ['missing', { name: 'a' }, 'plugin.schema-missing'],
    [
      'a 2.0.0 id',
      { $schema: 'https://agent-plugins.org/schemas/2.0.0/plugin.schema.json', name: 'a' },
      'plugin.schema-unsupported',
    ],
    ['the mcp.json id', { $schema: mcpSchemaId('1.0.0'), name: 'a' }, 'plugin.schema-unsupported'],
    ['an id with a trailing slash', { $schema: `${V100}/`, name: 'a' }, 'plugin.schema-unsupported'],
    ['a number', { $schema: 1, name: 'a' }, 'plugin.schema-unsupported'],
    ['null', { $schema: null, name: 'a' }, 'plugin.schema-unsupported'],
  ])('a $schema that is %s rejects the plugin', (_what, value, code) => {
    const result = check(value);
    expect(result.rejected).toBe(true);
    expect(result.spec).toBeUndefined();
    expect(result.manifest).toBeUndefined();
    expect(codes(result.findings)).toEqual([`${code} plugin.json#/$schema`]);
    expect(result.findings[0]?.rule).toBe('AR9O0');
  });

  it.each([null, [], 'plugin', 42, undefined])('a manifest that is not an object (%s) is rejected', (value) => {
    const result = check(value);
    expect(result.rejected).toBe(true);
    expect(codes(result.findings)).toEqual(['plugin.not-object plugin.json#']);
  });
});

describe('checkPluginManifest: plugin name (§5.5)', () => {
  it.each([['my-plugin'], ['acme.tools'], ['lint3r'], ['a'], ['0'], ['a.b-c.d'], ['x'.repeat(64)]])(
    '%s is a valid name',
    (name) => {
      expect(check({ $schema: V100, name }).rejected).toBe(false);
    },
  );

  it.each([
    ['', 'is empty'],
    ['x'.repeat(65), 'is longer than 64 characters'],
    ['My-Plugin', 'may hold only lower-case letters a-z, digits, "-" and "."'],
    ['a_b', 'may hold only lower-case letters a-z, digits, "-" and "."'],
    ['é', 'may hold only lower-case letters a-z, digits, "-" and "."'],
    ['a b', 'may hold only lower-case letters a-z, digits, "-" and "."'],
    ['-start', 'must start and end with a lower-case letter or digit'],
    ['end-', 'must start and end with a lower-case letter or digit'],
    ['.start', 'must start and end with a lower-case letter or digit'],
    ['end.', 'must start and end with a lower-case letter or digit'],
    ['has--double', 'contains "--"'],
    ['too.many..dots', 'contains ".."'],
  ])('%j is rejected with one name finding: %s', (name, message) => {
    for (const id of [V100, V110]) {
      const result = check({ $schema: id, name });
      expect(result.rejected).toBe(true);
      expect(result.findings).toEqual([
        { code: 'plugin.name-invalid', rule: 'AR9O0', severity: 'error', path: 'plugin.json#/name', message },
      ]);
    }
  });

  it.each([
    ['missing', {}, 'is required'],
    ['a number', { name: 7 }, 'must be string'],
    ['null', { name: null }, 'must be string'],
  ])('a name that is %s is a schema violation at #/name', (_what, fields, message) => {
    const result = check({ $schema: V100, ...fields });
    expect(result.rejected).toBe(true);
    expect(result.findings).toEqual([
      { code: 'plugin.schema-violation', rule: 'AR9O0', severity: 'error', path: 'plugin.json#/name', message },
    ]);
  });
});

describe('checkPluginManifest: closed manifest (§5.2)', () => {
  it('an unknown top-level field is a warning and is dropped; the plugin loads', () => {
    const result = check({ $schema: V100, name: 'a', mcpServers: {}, 'x/y~z': true });
    expect(result.rejected).toBe(false);
    expect(result.manifest).toEqual({ $schema: V100, name: 'a' });
    expect(codes(result.findings)).toEqual([
      'plugin.unknown-field plugin.json#/mcpServers',
      'plugin.unknown-field plugin.json#/x~1y~0z',
    ]);
    expect(result.findings.every((f) => f.severity === 'warning')).toBe(true);
  });

  it('presentation is an unknown field under 1.0.0: a warning, and it is dropped', () => {
    const result = check({ $schema: V100, name: 'a', presentation: { displayName: 'A' } });
    expect(result.rejected).toBe(false);
    expect(result.manifest).toEqual({ $schema: V100, name: 'a' });
    expect(codes(result.findings)).toEqual(['plugin.unknown-field plugin.json#/presentation']);
  });

  it('presentation is accepted under 1.1.0, an empty object included', () => {
    for (const presentation of [{ displayName: 'Acme Tools', icon: './assets/icon.png' }, {}]) {
      const result = check({ $schema: V110, name: 'a', presentation });
      expect(result.findings).toEqual([]);
      expect(result.manifest?.presentation).toEqual(presentation);
    }
  });

  it.each([
    ['icon.png'],
    ['https://example.com/icon.png'],
    ['/abs/icon.png'],
    ['../icon.png'],
    ['./a/../../icon.png'],
    ['.\\icon.png'],
    ['./'],
  ])('a presentation.icon string that is not plugin-relative (%s) is ignored, not fatal (§5.7.2)', (icon) => {
    const result = check({ $schema: V110, name: 'a', presentation: { displayName: 'A', icon } });
    expect(result.rejected).toBe(false);
    expect(result.manifest?.presentation).toEqual({ displayName: 'A' });
    expect(codes(result.findings)).toEqual(['plugin.icon-not-plugin-relative plugin.json#/presentation/icon']);
  });

  it.each([
    ['a non-string icon', { icon: 1 }, 'plugin.json#/presentation/icon', 'must be string'],
    ['a non-string displayName', { displayName: false }, 'plugin.json#/presentation/displayName', 'must be string'],
    [
      'an unknown presentation field',
      { color: 'red' },
      'plugin.json#/presentation/color',
      'is not a field of this object',
    ],
  ])('under 1.1.0, %s in presentation rejects the plugin', (_what, presentation, path, message) => {
    const result = check({ $schema: V110, name: 'a', presentation });
    expect(result.rejected).toBe(true);
    expect(result.findings).toEqual([
      { code: 'plugin.schema-violation', rule: 'AR9O0', severity: 'error', path, message },
    ]);
  });

  it.each([
    ['a string', 'com.example'],
    ['an array', []],
    ['null', null],
    ['a number', 3],
  ])('extensions that is %s is a warning and is ignored (§8.1)', (_what, extensions) => {
    const result = check({ $schema: V100, name: 'a', extensions });
    expect(result.rejected).toBe(false);
    expect(result.manifest).toEqual({ $schema: V100, name: 'a' });
    expect(result.findings).toMatchObject([
      { code: 'plugin.extensions-not-object', severity: 'warning', path: 'plugin.json#/extensions' },
    ]);
  });
});

describe('checkPluginManifest: field types (§5.3, §5.4)', () => {
  it.each([
    ['version', { version: 1 }, 'plugin.json#/version', 'must be string'],
    ['description', { description: ['x'] }, 'plugin.json#/description', 'must be string'],
    ['homepage', { homepage: {} }, 'plugin.json#/homepage', 'must be string'],
    ['license', { license: null }, 'plugin.json#/license', 'must be string'],
    ['keywords', { keywords: 'a,b' }, 'plugin.json#/keywords', 'must be array'],
    ['a keyword', { keywords: ['ok', 2] }, 'plugin.json#/keywords/1', 'must be string'],
    ['author', { author: 'Ann' }, 'plugin.json#/author', 'must be object'],
    ['author.email', { author: { email: 5 } }, 'plugin.json#/author/email', 'must be string'],
    [
      'an author field',
      { author: { name: 'Ann', twitter: '@ann' } },
      'plugin.json#/author/twitter',
      'is not a field of this object',
    ],
    [
      'an extension value',
      { extensions: { 'com.example': true } },
      'plugin.json#/extensions/com.example',
      'must be object',
    ],
  ])('a wrong %s rejects the plugin with a finding at its pointer', (_what, fields, path, message) => {
    const result = check({ $schema: V100, name: 'a', ...fields });
    expect(result.rejected).toBe(true);
    expect(result.manifest).toBeUndefined();
    expect(result.spec).toBe('1.0.0');
    expect(result.findings).toEqual([
      { code: 'plugin.schema-violation', rule: 'AR9O0', severity: 'error', path, message },
    ]);
  });

  it('every violation is reported, one finding each, sorted by path', () => {
    const result = check({ $schema: V100, name: 'Bad', version: 1, license: 2 });
    expect(codes(result.findings)).toEqual([
      'plugin.schema-violation plugin.json#/license',
      'plugin.name-invalid plugin.json#/name',
      'plugin.schema-violation plugin.json#/version',
    ]);
  });

  it.each([
    ['version', 'not-semver'],
    ['homepage', 'not a url'],
    ['repository', 'git@github.com:example/plugin'],
    ['license', 'Proprietary, see LICENSE'],
  ])('%s is checked only as a string: %j loads (§5.4)', (key, value) => {
    expect(check({ $schema: V100, name: 'a', [key]: value }).findings).toEqual([]);
  });

  it('author.email and author.url are checked only as strings (§5.4)', () => {
    expect(check({ $schema: V100, name: 'a', author: { email: 'nobody', url: 'nowhere' } }).findings).toEqual([]);
  });

  it('an empty author is omitted, with an info finding', () => {
    const result = check({ $schema: V100, name: 'a', author: {} });
    expect(result.rejected).toBe(false);
    expect(result.manifest).toEqual({ $schema: V100, name: 'a' });
    expect(result.findings).toEqual([
      {
        code: 'plugin.author-empty',
        rule: 'AR9O4',
        severity: 'info',
        path: 'plugin.json#/author',
        message: 'is empty and is omitted',
      },
    ]);
  });
});

describe('checkPluginManifest: extension namespaces (§8, §8.1)', () => {
  it.each([
    ['com.openai'],
    ['com.anthropic.claude-code'],
    ['io.github.goldziher.ai-rulez'],
    ['com.github.copilot'],
    ['org.example2.x9'],
  ])('%s is a valid namespace and its contents are not checked', (namespace) => {
    const result = check({ $schema: V110, name: 'a', extensions: { [namespace]: { anything: [1, { deep: null }] } } });
    expect(result.findings).toEqual([]);
    expect(result.manifest?.extensions).toEqual({ [namespace]: { anything: [1, { deep: null }] } });
  });

  it.each([
    ['a single label', 'openai'],
    ['upper case', 'com.OpenAI'],
    ['an empty label', 'com..openai'],
    ['a leading dot', '.com.openai'],
    ['a trailing dot', 'com.openai.'],
    ['a label starting with a hyphen', 'com.-openai'],
    ['a label ending with a hyphen', 'com.openai-'],
    ['a numeric top-level label', '1com.openai'],
    ['an underscore', 'com.open_ai'],
    ['a slash', 'com.openai/x'],
    ['a label longer than 63 characters', `com.${'a'.repeat(64)}`],
    ['an empty key', ''],
  ])('a namespace with %s: 1.1.0 rejects the plugin, 1.0.0 reports and ignores it (AR9O0)', (_what, namespace) => {
    // 1.1.0-draft §5.2: "Any manifest violation other than … is fatal".
    const draft = check({ $schema: V110, name: 'a', extensions: { 'com.ok': {}, [namespace]: {} } });
    expect(draft.rejected).toBe(true);
    expect(draft.findings).toMatchObject([
      { code: 'plugin.extension-namespace-invalid', rule: 'AR9O0', severity: 'error' },
    ]);
    expect(draft.findings[0]?.path.startsWith('plugin.json#/extensions/')).toBe(true);
    // 1.0.0 §5.2: "Any schema violation other than … is fatal"; the schema has no pattern on these keys.
    const published = check({ $schema: V100, name: 'a', extensions: { 'com.ok': {}, [namespace]: {} } });
    expect(published.rejected).toBe(false);
    expect(published.manifest?.extensions).toEqual({ 'com.ok': {} });
    expect(published.findings).toMatchObject([
      { code: 'plugin.extension-namespace-ignored', rule: 'AR9O0', severity: 'warning' },
    ]);
    expect(published.findings[0]?.path.startsWith('plugin.json#/extensions/')).toBe(true);
  });
});

describe('checkPluginManifest: findings never echo values', () => {
  it('a credential-looking value in $schema, name or a field does not appear in any message', () => {
    const secret = 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB';
    for (const value of [
      { $schema: `https://user:${secret}@agent-plugins.org/schemas/1.0.0/plugin.schema.json`, name: 'a' },
      { $schema: V100, name: secret },
      { $schema: V100, name: 'a', version: { token: secret } },
      { $schema: V100, name: 'a', token: secret },
    ]) {
      const { findings } = check(value);
      expect(findings.length).toBeGreaterThan(0);
      for (const f of findings) expect(f.message).not.toContain(secret);
    }
  });
});

describe('checkMcpManifestVersion (§7.2.2, §10.1)', () => {
  it.each(['1.0.0', '1.1.0'] as const)('an mcp.json naming the same version (%s) keeps MCP enabled', (spec) => {
    expect(checkMcp(spec, { $schema: mcpSchemaId(spec), mcpServers: {} })).toEqual({
      spec,
      mcpDisabled: false,
      findings: [],
    });
  });

  it.each([
    ['1.0.0', { $schema: mcpSchemaId('1.1.0'), mcpServers: {} }, 'mcp.spec-mismatch', 'mcp.json#/$schema', '1.1.0'],
    ['1.1.0', { $schema: mcpSchemaId('1.0.0'), mcpServers: {} }, 'mcp.spec-mismatch', 'mcp.json#/$schema', '1.0.0'],
    [
      '1.0.0',
      { $schema: pluginSchemaId('1.0.0'), mcpServers: {} },
      'mcp.schema-unsupported',
      'mcp.json#/$schema',
      undefined,
    ],
    [
      '1.0.0',
      { $schema: 'https://agent-plugins.org/schemas/9.0.0/mcp.schema.json', mcpServers: {} },
      'mcp.schema-unsupported',
      'mcp.json#/$schema',
      undefined,
    ],
    ['1.0.0', { mcpServers: {} }, 'mcp.schema-missing', 'mcp.json#/$schema', undefined],
    ['1.0.0', [], 'mcp.not-object', 'mcp.json#', undefined],
  ] as const)('plugin %s with a bad mcp.json disables MCP alone: %j → %s', (pluginSpec, mcp, code, path, spec) => {
    const result = checkMcp(pluginSpec, mcp);
    expect(result.mcpDisabled).toBe(true);
    expect(result.spec).toBe(spec);
    expect(result.findings).toMatchObject([{ code, rule: 'AR9O2', severity: 'error', path }]);
  });

  it('a version mismatch in mcp.json does not reject the plugin', () => {
    const plugin = check({ $schema: V110, name: 'a' });
    const mcp = checkMcp(plugin.spec ?? '1.0.0', { $schema: mcpSchemaId('1.0.0'), mcpServers: {} });
    expect(plugin.rejected).toBe(false);
    expect(mcp.mcpDisabled).toBe(true);
  });
});

describe('findings produced by these checks', () => {
  afterAll(() => {
    // Runs after the tests above: every finding they produced must be in the table and explained.
    for (const f of produced) {
      expect(Object.hasOwn(FINDING_CODES, f.code), f.code).toBe(true);
      expect(explain(f.code), f.code).toBeDefined();
      expect(explain(f.rule), f.rule).toBeDefined();
    }
  });

  it('every result lists its findings sorted', () => {
    const result = check({ $schema: V100, name: '-x', zeta: 1, alpha: 2, author: {}, extensions: 1 });
    expect(result.findings).toEqual(sortFindings(result.findings));
    expect(codes(result.findings)).toEqual([
      'plugin.unknown-field plugin.json#/alpha',
      'plugin.author-empty plugin.json#/author',
      'plugin.extensions-not-object plugin.json#/extensions',
      'plugin.name-invalid plugin.json#/name',
      'plugin.unknown-field plugin.json#/zeta',
    ]);
  });

  it('every finding code in the table is produced by some check above', () => {
    // Runs last in file order, after the tables above filled `produced`.
    expect([...new Set(produced.map((f) => f.code))].sort()).toEqual(Object.keys(MANIFEST_FINDING_CODES).sort());
  });

  it('every produced finding takes its rule and severity from the table', () => {
    for (const f of produced) {
      const info = FINDING_CODES[f.code as keyof typeof FINDING_CODES];
      expect({ rule: f.rule, severity: f.severity }).toEqual({ rule: info.rule, severity: info.severity });
    }
  });
});
