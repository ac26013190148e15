import { describe, expect, it } from 'vitest';
import { RULES } from '../src/findings.js';
import {
  DEFAULT_OPENCODE_DEPENDENCY,
  PI_OWNED_KEYS,
  RUNTIME_FINDING_CODES,
  type RuntimePackageInput,
  opencodePackageJson,
  packageJsonDrift,
  piPackageJson,
} from '../src/runtimes/index.js';

const encode = (value: string): Uint8Array => new TextEncoder().encode(value);
const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const parse = (bytes: Uint8Array): Record<string, unknown> => JSON.parse(decode(bytes)) as Record<string, unknown>;

const base: RuntimePackageInput = {
  name: 'acme.tools',
  version: '1.2.0',
  description: 'Acme review tooling.',
  paths: [
    'plugin.json',
    'mcp.json',
    'skills/review/SKILL.md',
    'skills/review/scripts/x.sh',
    'com.github.copilot/agents/a.agent.md',
  ],
};

describe('runtime finding codes', () => {
  it('give every code a rule, a severity and a text', () => {
    for (const info of Object.values(RUNTIME_FINDING_CODES)) {
      expect(RULES).toContain(info.rule);
      expect(info.text.length).toBeGreaterThan(20);
    }
  });
});

describe('OpenCode package.json', () => {
  it('depends on @opencode/plugin ^2.0.26 and has no packageManager by default', () => {
    const { bytes, findings } = opencodePackageJson(base);
    expect(findings).toEqual([]);
    expect(decode(bytes)).toBe(
      `${JSON.stringify(
        {
          name: 'acme.tools',
          version: '1.2.0',
          description: 'Acme review tooling.',
          files: ['com.github.copilot', 'mcp.json', 'plugin.json', 'skills'],
          dependencies: { '@opencode/plugin': '^2.0.26' },
        },
        null,
        2,
      )}\n`,
    );
    expect(DEFAULT_OPENCODE_DEPENDENCY).toBe('^2.0.26');
  });

  it('takes the dependency range and packageManager from the configuration', () => {
    const out = parse(
      opencodePackageJson({ ...base, config: { opencodeDependency: '^2.1.0', packageManager: 'pnpm@9.15.0' } }).bytes,
    );
    expect(out.dependencies).toEqual({ '@opencode/plugin': '^2.1.0' });
    expect(out.packageManager).toBe('pnpm@9.15.0');
  });

  it('writes the manifest identity in a fixed key order and leaves out an empty author and empty keywords', () => {
    const full = parse(
      opencodePackageJson({
        ...base,
        license: 'MIT',
        repository: 'https://github.com/acme/tools',
        keywords: ['review', 'lint'],
        author: { url: 'https://acme.dev', name: 'Acme' },
        config: { packageManager: 'pnpm@9.15.0' },
      }).bytes,
    );
    expect(Object.keys(full)).toEqual([
      'name',
      'version',
      'description',
      'keywords',
      'license',
      'author',
      'repository',
      'files',
      'dependencies',
      'packageManager',
    ]);
    expect(Object.keys(full.author as object)).toEqual(['name', 'url']);
    expect(full.keywords).toEqual(['review', 'lint']);
    const bare = parse(opencodePackageJson({ ...base, author: {}, keywords: [] }).bytes);
    expect(bare).not.toHaveProperty('author');
    expect(bare).not.toHaveProperty('keywords');
  });

  it('writes no type, main or exports: the package holds no JavaScript module', () => {
    const out = parse(opencodePackageJson(base).bytes);
    for (const key of ['type', 'main', 'exports', 'module']) expect(out).not.toHaveProperty(key);
  });

  it.each([
    ['../outside.txt', 'contains a ".." segment'],
    ['/abs', 'is absolute'],
    ['a\\b', 'contains a backslash (use "/")'],
  ])('leaves the package path %j out of files: it %s', (path, problem) => {
    const { bytes, findings } = opencodePackageJson({ ...base, paths: [path, 'plugin.json', 'package.json'] });
    expect(parse(bytes).files).toEqual(['plugin.json']);
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'runtime.file-path-invalid',
        rule: 'AR9O5',
        path: 'package.json#/files',
        message: `package path 1 ${problem}; it is not listed`,
      }),
    ]);
  });

  it('gives identical bytes whatever order paths come in', () => {
    const a = opencodePackageJson(base).bytes;
    const b = opencodePackageJson({ ...base, paths: [...base.paths].reverse() }).bytes;
    expect(decode(b)).toBe(decode(a));
  });
});

describe('Pi package.json', () => {
  it('points pi.skills at ./.pi/skills by default', () => {
    const { bytes, findings } = piPackageJson({ ...base, paths: [...base.paths, '.pi/skills/review/SKILL.md'] });
    expect(findings).toEqual([]);
    const out = parse(bytes);
    expect(out.pi).toEqual({ skills: ['./.pi/skills'] });
    expect(out.files).toEqual(['.pi', 'com.github.copilot', 'mcp.json', 'plugin.json', 'skills']);
    expect(out).not.toHaveProperty('dependencies');
    expect(decode(bytes).endsWith('}\n')).toBe(true);
  });

  it.each([
    ['skills', './skills'],
    ['./skills/', './skills'],
    ['pkg/skills', './pkg/skills'],
  ])('writes skills_dir %j as %j (skills reuses the tree the other runtimes write)', (skillsDir, written) => {
    expect(parse(piPackageJson({ ...base, config: { pi: { skillsDir } } }).bytes).pi).toEqual({ skills: [written] });
  });

  it.each(['../skills', '/abs/skills', '', 'a\\b'])('refuses skills_dir %j and writes the default', (skillsDir) => {
    const { bytes, findings } = piPackageJson({ ...base, config: { pi: { skillsDir } } });
    expect(parse(bytes).pi).toEqual({ skills: ['./.pi/skills'] });
    expect(findings.map((f) => [f.code, f.rule])).toEqual([['runtime.pi-skills-dir-invalid', 'AR9O5']]);
  });

  it('owns the whole file by default and ignores an existing one', () => {
    const existing = encode('{"scripts":{"x":"y"}}');
    expect(decode(piPackageJson(base, existing).bytes)).toBe(decode(piPackageJson(base).bytes));
  });

  it('writes the whole file under merge when there is no existing one', () => {
    const input = {
      ...base,
      license: 'MIT',
      config: { pi: { packageJson: 'merge' as const }, packageManager: 'pnpm@9.15.0' },
    };
    const out = parse(piPackageJson(input).bytes);
    expect(out.license).toBe('MIT');
    expect(out.packageManager).toBe('pnpm@9.15.0');
  });
});

describe('Pi package.json merge', () => {
  const merge: RuntimePackageInput = {
    ...base,
    keywords: ['review'],
    config: { pi: { packageJson: 'merge' }, packageManager: 'pnpm@9.15.0' },
  };
  const existing = {
    scripts: { test: 'vitest' },
    name: 'old-name',
    private: true,
    version: '0.0.1',
    devDependencies: { vitest: '4.1.12' },
    packageManager: 'npm@10.0.0',
    license: 'Apache-2.0',
    repository: 'https://example.com/old',
    '10': 'integer-like',
  };
  const existingBytes = encode(JSON.stringify(existing, null, '\t'));

  it('keeps every foreign key and its order, and updates owned keys in place', () => {
    const { bytes, findings } = piPackageJson(merge, existingBytes);
    expect(findings).toEqual([]);
    const out = parse(bytes);
    // repository is owned and the manifest sets none, so it is removed; description and the
    // other missing owned keys follow the nearest owned key before them.
    expect(Object.keys(out)).toEqual([
      '10',
      'scripts',
      'name',
      'private',
      'version',
      'description',
      'keywords',
      'files',
      'pi',
      'devDependencies',
      'packageManager',
      'license',
    ]);
    expect(out).toMatchObject({
      name: 'acme.tools',
      version: '1.2.0',
      scripts: { test: 'vitest' },
      private: true,
      devDependencies: { vitest: '4.1.12' },
      packageManager: 'npm@10.0.0',
      license: 'Apache-2.0',
      pi: { skills: ['./.pi/skills'] },
    });
    expect(decode(bytes)).toMatch(/^\{\n {2}"10"/);
  });

  it('puts owned keys first, in their order, when the file has none', () => {
    const out = parse(piPackageJson(merge, encode('{"scripts":{},"devDependencies":{}}')).bytes);
    expect(Object.keys(out)).toEqual([
      'name',
      'version',
      'description',
      'keywords',
      'files',
      'pi',
      'scripts',
      'devDependencies',
    ]);
  });

  it('leaves an existing file that is not a JSON object exactly as it is', () => {
    for (const bad of [encode('not json'), encode('[1]'), new Uint8Array([0x7b, 0xff, 0x7d])]) {
      const { bytes, findings } = piPackageJson(merge, bad);
      expect(bytes).toBe(bad);
      expect(findings.map((f) => [f.code, f.path])).toEqual([['runtime.package-json-unreadable', 'package.json']]);
    }
  });

  it('gives the same bytes when merged again into its own output', () => {
    const once = piPackageJson(merge, existingBytes).bytes;
    expect(decode(piPackageJson(merge, once).bytes)).toBe(decode(once));
  });

  it('lists exactly the owned keys of the seed', () => {
    expect([...PI_OWNED_KEYS].sort()).toEqual([
      'author',
      'description',
      'files',
      'keywords',
      'name',
      'pi',
      'repository',
      'version',
    ]);
  });
});

describe('package.json drift', () => {
  const expected = piPackageJson(base).bytes;
  const edit = (change: (value: Record<string, unknown>) => void): Uint8Array => {
    const value = parse(expected);
    change(value);
    return encode(`${JSON.stringify(value, null, 2)}\n`);
  };

  it.each<[string, Uint8Array | undefined, string[], string[]]>([
    ['identical bytes', expected, [], []],
    ['missing file', undefined, ['package.json'], ['package.json']],
    ['whitespace only', encode(JSON.stringify(parse(expected))), ['package.json'], []],
    ['foreign key added', edit((v) => (v.scripts = { x: 'y' })), ['package.json'], []],
    ['packageManager added', edit((v) => (v.packageManager = 'npm@10')), ['package.json'], []],
    ['version edited', edit((v) => (v.version = '9.9.9')), ['package.json'], ['package.json#/version']],
    [
      'owned keys edited and removed',
      edit((v) => {
        v.pi = { skills: ['./x'] };
        delete v.description;
      }),
      ['package.json'],
      ['package.json#/description', 'package.json#/pi'],
    ],
    ['owned key added', edit((v) => (v.author = { name: 'X' })), ['package.json'], ['package.json#/author']],
    ['unreadable file', encode('{'), ['package.json'], ['package.json']],
  ])('%s: own reports %j, merge reports %j', (_, actual, own, merge) => {
    expect(packageJsonDrift(expected, actual, 'own')).toEqual(own);
    expect(packageJsonDrift(expected, actual, 'merge')).toEqual(merge);
  });
});
