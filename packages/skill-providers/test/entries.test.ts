import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DuplicateSkillNameError,
  SkillEntryError,
  canonicalDeclaration,
  maskSkillSource,
  parseGitRepository,
  parseGitString,
  parseSkillDeclaration,
  parseSkillEntry,
  skillNameProblem,
} from '../src/entries/index.js';
import { SkillError } from '../src/errors-base.js';
import type { SkillSource } from '../src/provider.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';

/** The error `run` throws; fails the test if it returns or throws something other than a SkillEntryError. */
function caught(run: () => unknown): SkillEntryError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SkillEntryError);
    return error as SkillEntryError;
  }
  throw new Error('expected a SkillEntryError, but nothing was thrown');
}

/** Every text of an error that could reach a log. */
function texts(error: SkillEntryError): string[] {
  return [error.message, String(error), JSON.stringify(error), error.stack ?? '', error.entry];
}

function git(source: string, version: string, path: string, name: string): SkillSource {
  return { provider: 'git', source, version, path, name, config: {} };
}

describe('git strings: accepted forms', () => {
  it.each([
    // scp-like, with and without a user
    ['git@code.example.com:team/skills.git', git('git@code.example.com:team/skills.git', 'HEAD', '', 'skills')],
    [
      'code.example.com:team/skills.git@main#skills/example',
      git('code.example.com:team/skills.git', 'main', 'skills/example', 'example'),
    ],
    [
      'git@code.example.com:team/skills.git@v1.2.0#skills/a',
      git('git@code.example.com:team/skills.git', 'v1.2.0', 'skills/a', 'a'),
    ],
    ['git@code.example.com:~/skills.git', git('git@code.example.com:~/skills.git', 'HEAD', '', 'skills')],
    ['git@[::1]:team/skills.git@main', git('git@[::1]:team/skills.git', 'main', '', 'skills')],
    ['gitserver:skills.git', git('gitserver:skills.git', 'HEAD', '', 'skills')],
    // ssh:// with a user and a port; the user's @ is never a ref
    [
      'ssh://git@code.example.com:2222/team/skills.git@main#skills/a',
      git('ssh://git@code.example.com:2222/team/skills.git', 'main', 'skills/a', 'a'),
    ],
    [
      'ssh://git@code.example.com/team/skills.git',
      git('ssh://git@code.example.com/team/skills.git', 'HEAD', '', 'skills'),
    ],
    ['ssh://code.example.com/team/skills', git('ssh://code.example.com/team/skills', 'HEAD', '', 'skills')],
    // https:// with a port; .git suffix or not
    [
      'https://git.example.com:8443/team/skills.git@main',
      git('https://git.example.com:8443/team/skills.git', 'main', '', 'skills'),
    ],
    ['https://github.com/org/skills', git('https://github.com/org/skills', 'HEAD', '', 'skills')],
    ['https://github.com/org/skills.git', git('https://github.com/org/skills.git', 'HEAD', '', 'skills')],
    ['https://github.com/org/skills/', git('https://github.com/org/skills/', 'HEAD', '', 'skills')],
    ['https://[::1]:8443/skills.git', git('https://[::1]:8443/skills.git', 'HEAD', '', 'skills')],
    ['HTTPS://GitHub.com/org/skills', git('HTTPS://GitHub.com/org/skills', 'HEAD', '', 'skills')],
    // http is parsed; whether it is allowed is the provider's business
    ['http://127.0.0.1:9418/skills.git#a', git('http://127.0.0.1:9418/skills.git', 'HEAD', 'a', 'a')],
    ['http://git.example.com/skills.git', git('http://git.example.com/skills.git', 'HEAD', '', 'skills')],
    // refs with /, with @, full names, commit ids
    [
      'https://github.com/org/skills@feature/x#skills/a',
      git('https://github.com/org/skills', 'feature/x', 'skills/a', 'a'),
    ],
    ['https://github.com/org/skills@release@2024#a', git('https://github.com/org/skills', 'release@2024', 'a', 'a')],
    ['git@host.example:team/skills.git@a@b@c', git('git@host.example:team/skills.git', 'a@b@c', '', 'skills')],
    ['https://github.com/org/skills@refs/tags/v1', git('https://github.com/org/skills', 'refs/tags/v1', '', 'skills')],
    [`https://github.com/org/skills@${COMMIT}#skills/a`, git('https://github.com/org/skills', COMMIT, 'skills/a', 'a')],
    [
      'https://github.com/org/skills@abc1234#skills/a',
      git('https://github.com/org/skills', 'abc1234', 'skills/a', 'a'),
    ],
    ['https://github.com/org/skills@ABCD', git('https://github.com/org/skills', 'ABCD', '', 'skills')],
    // missing @ref, missing #directory, both missing
    ['https://github.com/org/skills#skills/a', git('https://github.com/org/skills', 'HEAD', 'skills/a', 'a')],
    ['https://github.com/org/skills@main', git('https://github.com/org/skills', 'main', '', 'skills')],
    ['git@host.example:team/skills', git('git@host.example:team/skills', 'HEAD', '', 'skills')],
    // directories: nested, trailing slash, the root spelled ".", a # inside
    ['https://github.com/org/skills#a/b/c-d', git('https://github.com/org/skills', 'HEAD', 'a/b/c-d', 'c-d')],
    ['https://github.com/org/skills#skills/a/', git('https://github.com/org/skills', 'HEAD', 'skills/a', 'a')],
    ['https://github.com/org/my-skills.git#.', git('https://github.com/org/my-skills.git', 'HEAD', '', 'my-skills')],
    ['https://github.com/org/skills#x#y/z', git('https://github.com/org/skills', 'HEAD', 'x#y/z', 'z')],
  ])('%s', (text, expected) => {
    expect(parseGitString(text)).toEqual(expected);
  });

  it('reads the first @ of the repository path as the ref, so a repository path cannot hold @', () => {
    expect(parseGitString('https://host.example/org/@scope/a.git')).toEqual(
      git('https://host.example/org/', 'scope/a.git', '', 'org'),
    );
  });

  it('is the same as its object form', () => {
    const parsed = parseGitString('git@code.example.com:team/skills.git@main#skills/example');
    expect(parseSkillEntry({ ...parsed }, 0)).toEqual(parsed);
  });
});

describe('git strings: refused forms', () => {
  it.each([
    // empty, whitespace, control characters
    ['', 'SKILL_ENTRY_INVALID'],
    [' https://github.com/org/skills', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills ', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills@main\n', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills#my skill', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills#a\u0000b', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills#a\u00a0b', 'SKILL_ENTRY_INVALID'],
    // empty @ and empty #
    ['https://github.com/org/skills@', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills@#dir', 'SKILL_ENTRY_INVALID'],
    ['git@code.example.com:team/skills.git@#dir', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills#', 'SKILL_ENTRY_INVALID'],
    ['https://github.com/org/skills@main#', 'SKILL_ENTRY_INVALID'],
    // directories that escape or are not clean
    ['https://github.com/org/skills#../x', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#a/../../x', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#a/../b', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#./a', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#/etc/skills', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#/', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#a//b', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#a\\b', 'SKILL_PATH_UNSAFE'],
    ['https://github.com/org/skills#.git/hooks', 'SKILL_PATH_UNSAFE'],
    // refs
    ['https://github.com/org/skills@main..x', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@main@{1}', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@@', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@-x', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@a:b', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@x.lock', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@%2e%2e', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@/main', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@main/', 'SKILL_REF_INVALID'],
    ['https://github.com/org/skills@a~1', 'SKILL_REF_INVALID'],
    // repositories
    ['github.com/org/skills', 'SKILL_REPOSITORY_INVALID'],
    ['org/skills', 'SKILL_REPOSITORY_INVALID'],
    ['/srv/git/skills.git', 'SKILL_REPOSITORY_INVALID'],
    ['git://github.com/org/skills.git', 'SKILL_REPOSITORY_INVALID'],
    ['file:///srv/git/skills.git', 'SKILL_REPOSITORY_INVALID'],
    ['ftp://example.com/skills.git', 'SKILL_REPOSITORY_INVALID'],
    ['https://github.com', 'SKILL_REPOSITORY_INVALID'],
    ['https://github.com/', 'SKILL_REPOSITORY_INVALID'],
    ['https://github.com//', 'SKILL_REPOSITORY_INVALID'],
    ['https://github.com/@main', 'SKILL_REPOSITORY_INVALID'],
    ['https://host.example:0/x', 'SKILL_REPOSITORY_INVALID'],
    ['https://host.example:65536/x', 'SKILL_REPOSITORY_INVALID'],
    ['https://host.example:/x', 'SKILL_REPOSITORY_INVALID'],
    ['https://-host.example/x', 'SKILL_REPOSITORY_INVALID'],
    ['https://h\u00f3st.example/x', 'SKILL_REPOSITORY_INVALID'],
    ['https:///x', 'SKILL_REPOSITORY_INVALID'],
    ['https://host.example/x?ref=main', 'SKILL_REPOSITORY_INVALID'],
    ['https://host.example?x', 'SKILL_REPOSITORY_INVALID'],
    ['https://host.example/a/../b', 'SKILL_REPOSITORY_INVALID'],
    ['https://host.example/a\\b', 'SKILL_REPOSITORY_INVALID'],
    ['ssh://@host.example/x', 'SKILL_REPOSITORY_INVALID'],
    ['ssh://-oProxyCommand=x@host.example/x', 'SKILL_REPOSITORY_INVALID'],
    ['-oProxyCommand=x:y.git', 'SKILL_REPOSITORY_INVALID'],
    ['-host:team/skills.git', 'SKILL_REPOSITORY_INVALID'],
    ['git@host.example:', 'SKILL_REPOSITORY_INVALID'],
    ['git@host.example:@main', 'SKILL_REPOSITORY_INVALID'],
    ['@host.example:team/x.git', 'SKILL_REPOSITORY_INVALID'],
    // credentials
    ['https://user:pass@github.com/org/skills.git', 'SKILL_URL_HAS_CREDENTIALS'],
    ['https://token@github.com/org/skills.git', 'SKILL_URL_HAS_CREDENTIALS'],
    ['https://@github.com/org/skills.git', 'SKILL_URL_HAS_CREDENTIALS'],
    ['http://user:pass@127.0.0.1/skills.git', 'SKILL_URL_HAS_CREDENTIALS'],
    ['ssh://git:pass@host.example/skills.git', 'SKILL_URL_HAS_CREDENTIALS'],
    ['https://alice:pa/ss@github.com/org/skills.git', 'SKILL_URL_HAS_CREDENTIALS'],
    ['alice:secret@github.com/org/skills.git', 'SKILL_URL_HAS_CREDENTIALS'],
    ['gitserver:skills@main', 'SKILL_URL_HAS_CREDENTIALS'],
    // derived names that break the name rule
    ['https://github.com/org/Skills.git', 'SKILL_NAME_INVALID'],
    ['https://github.com/org/skills#skills/My_Skill', 'SKILL_NAME_INVALID'],
    ['https://github.com/org/skills#skills/a--b', 'SKILL_NAME_INVALID'],
    ['https://github.com/org/skills#skills/-a', 'SKILL_NAME_INVALID'],
    [`https://github.com/org/skills#x/${'a'.repeat(65)}`, 'SKILL_NAME_INVALID'],
    ['https://github.com/org/.git', 'SKILL_NAME_INVALID'],
  ])('%j is refused with %s', (text, code) => {
    const error = caught(() => parseGitString(text));
    expect(error.code).toBe(code);
    expect(error.index).toBeUndefined();
  });

  it('asks for the object form with an explicit name when a derived name breaks the rule', () => {
    const error = caught(() => parseGitString('https://github.com/org/skills#skills/My_Skill'));
    expect(error).toMatchObject({ code: 'SKILL_NAME_INVALID', derived: true, skillName: '"My_Skill"' });
    expect(error.message).toContain('use the object form with an explicit "name"');
  });

  it('names the fault: the ref, the path, the repository', () => {
    expect(caught(() => parseGitString('https://github.com/org/skills@main..x'))).toMatchObject({
      ref: '"main..x"',
      reason: 'contains ..',
    });
    expect(caught(() => parseGitString('https://github.com/org/skills#../x'))).toMatchObject({
      path: '"../x"',
      reason: 'has a .. segment',
    });
    expect(caught(() => parseGitString('git://github.com/org/skills.git')).message).toContain('"git"');
  });
});

describe('credentials in URLs are refused and never echoed', () => {
  const secretBearing = [
    'https://alice:S3CRET-PASSWORD@github.com/org/skills.git',
    'https://S3CRET-PASSWORD@github.com/org/skills.git@main#skills/a',
    'https://alice:S3CRET-PASSWORD@github.com/org/skills.git@bad..ref#x',
    'https://alice:S3CRET/PASSWORD@github.com/org/skills.git', // unencoded / in the password
    'https://alice:S3CRET#PASSWORD@github.com/org/skills.git', // unencoded # in the password
    'https://alice:S3CRET?PASSWORD@github.com/org/skills.git', // unencoded ? in the password
    'https://alice:S3C@RET-PASSWORD@github.com/org/skills.git', // unencoded @ in the password
    'https://alice:S3CRET-PASSWORD@github.com/org/sk ills.git',
    'https://alice:S3CRET-PASSWORD@exa mple.com/a',
    'http://alice:S3CRET-PASSWORD@127.0.0.1/skills.git',
    'ssh://alice:S3CRET-PASSWORD@github.com/org/skills.git',
    'https://github.com/org/skills.git?access_token=S3CRET-PASSWORD',
    'https://github.com/org/skills.git?access_token=S3CRET-PASSWORD#dir',
    'alice:S3CRET-PASSWORD@github.com/org/skills.git',
    'alice:S3CRET-PASSWORD@github.com/org/skills.git@main#skills/a',
    'S3CRET-PASSWORD@github.com/org/skills.git',
    'ftp://alice:S3CRET-PASSWORD@example.com/skills.git',
    'https://alice:S3CRET-PASSWORD@github.com/org/skills.git\n',
  ];

  it.each(secretBearing)('%j: the secret is in no message, stack, JSON or entry field', (text) => {
    const attempts = [
      () => parseGitString(text),
      () => parseSkillEntry(text, 3),
      () => parseSkillEntry({ provider: 'git', source: text, version: 'main', name: 'a' }, 3),
      () => parseSkillEntry({ provider: 'other', source: text, version: 'main', name: 'a' }, 3),
      () => parseSkillDeclaration(['https://github.com/org/other.git', text]),
      () => parseGitRepository(text),
    ];
    let refusals = 0;
    for (const attempt of attempts) {
      let error: unknown;
      try {
        attempt();
      } catch (thrown) {
        error = thrown;
      }
      if (error === undefined) continue; // an opaque provider may accept what has no userinfo
      refusals += 1;
      expect(error).toBeInstanceOf(SkillEntryError);
      for (const shown of texts(error as SkillEntryError)) {
        expect(shown).not.toContain('S3CRET');
        expect(shown).not.toContain('PASSWORD');
      }
    }
    expect(refusals).toBeGreaterThanOrEqual(5);
  });

  it('shows the URL with its userinfo masked', () => {
    const error = caught(() => parseGitString('https://alice:S3CRET@github.com/org/skills.git@main#skills/a'));
    expect(error.code).toBe('SKILL_URL_HAS_CREDENTIALS');
    expect(error).toMatchObject({ url: '"https://***@github.com/org/skills.git@main"' });
    expect(error.entry).toBe('"https://***@github.com/org/skills.git@main#skills/a"');
  });

  it('keeps a plain ssh login name visible and masks the rest', () => {
    expect(maskSkillSource('ssh://git@host.example/x.git@main')).toBe('ssh://git@host.example/x.git@main');
    expect(maskSkillSource('git@host.example:x.git@main#a')).toBe('git@host.example:x.git@main#a');
    expect(maskSkillSource('https://token@host.example/x.git@main')).toBe('https://***@host.example/x.git@main');
    expect(maskSkillSource('alice:pw@github.com/x')).toBe('alice:***@github.com/x');
    expect(maskSkillSource('https://host.example/x?token=y#dir')).toBe('https://host.example/x?***#dir');
  });
});

describe('object entries', () => {
  const seedExample = {
    provider: 'git',
    source: 'git@code.example.com:team/skills.git',
    version: COMMIT,
    path: 'skills/example',
    name: 'example',
    config: {
      deploy_key_secret_name: 'skills-read-key',
      known_hosts: 'code.example.com ssh-ed25519 AAAA',
    },
  };

  it('accepts the documented example as is, with config copied', () => {
    const parsed = parseSkillEntry(seedExample, 0);
    expect(parsed).toEqual(seedExample);
    expect(parsed.config).not.toBe(seedExample.config);
  });

  it.each([
    [{ path: undefined }, ''],
    [{ path: '' }, ''],
    [{ path: '.' }, ''],
    [{ path: 'skills/a/' }, 'skills/a'],
    [{ path: 'my skills/a' }, 'my skills/a'],
  ])('normalizes path %j to %j (absent is the root)', (patch, path) => {
    const { path: _unused, ...rest } = seedExample;
    expect(parseSkillEntry({ ...rest, ...patch }, 0).path).toBe(path);
  });

  it('defaults config to {}', () => {
    const { config: _unused, ...rest } = seedExample;
    expect(parseSkillEntry(rest, 0).config).toEqual({});
    expect(parseSkillEntry({ ...rest, config: undefined }, 0).config).toEqual({});
  });

  it('treats source and version of other providers as opaque', () => {
    const entry = { provider: 'local', source: '/srv/my skills', version: 'any thing?', name: 'a' };
    expect(() => parseSkillEntry({ ...entry, version: 'v 1' }, 0)).toThrow(
      expect.objectContaining({ code: 'SKILL_ENTRY_INVALID', field: 'version' }),
    );
    expect(parseSkillEntry({ ...entry, version: 'latest' }, 0)).toEqual({
      ...entry,
      version: 'latest',
      path: '',
      config: {},
    });
  });

  it('checks a git object like the git string form, except that its repository path may hold @', () => {
    const entry = { provider: 'git', source: 'https://host.example/org/@scope/a.git', version: 'main', name: 'a' };
    expect(parseSkillEntry(entry, 0).source).toBe('https://host.example/org/@scope/a.git');
    expect(caught(() => parseSkillEntry({ ...entry, source: 'github.com/x' }, 0)).code).toBe(
      'SKILL_REPOSITORY_INVALID',
    );
    expect(caught(() => parseSkillEntry({ ...entry, version: 'a..b' }, 0)).code).toBe('SKILL_REF_INVALID');
    expect(caught(() => parseSkillEntry({ ...entry, source: 'https://t@host.example/x' }, 0)).code).toBe(
      'SKILL_URL_HAS_CREDENTIALS',
    );
  });

  const base = { provider: 'git', source: 'https://github.com/org/skills', version: 'main', name: 'a' };
  it.each([
    // required fields: missing, mistyped, empty
    ['missing provider', { ...base, provider: undefined }, 'SKILL_ENTRY_INVALID', 'provider'],
    ['missing source', { provider: 'git', version: 'main', name: 'a' }, 'SKILL_ENTRY_INVALID', 'source'],
    ['missing version', { provider: 'git', source: base.source, name: 'a' }, 'SKILL_ENTRY_INVALID', 'version'],
    ['missing name', { provider: 'git', source: base.source, version: 'main' }, 'SKILL_ENTRY_INVALID', 'name'],
    ['numeric version', { ...base, version: 1 }, 'SKILL_ENTRY_INVALID', 'version'],
    ['null name', { ...base, name: null }, 'SKILL_ENTRY_INVALID', 'name'],
    ['empty provider', { ...base, provider: '' }, 'SKILL_ENTRY_INVALID', 'provider'],
    ['empty source', { ...base, source: '' }, 'SKILL_ENTRY_INVALID', 'source'],
    ['provider with a space', { ...base, provider: 'g it' }, 'SKILL_ENTRY_INVALID', 'provider'],
    ['source with an edge space', { ...base, source: `${base.source} ` }, 'SKILL_ENTRY_INVALID', 'source'],
    ['source with a newline', { ...base, source: `${base.source}\n` }, 'SKILL_ENTRY_INVALID', 'source'],
    // unknown keys
    ['an unknown key', { ...base, ref: 'main' }, 'SKILL_ENTRY_INVALID', 'ref'],
    [
      'a __proto__ key from JSON',
      JSON.parse('{"provider":"git","source":"https://h.example/x","version":"v","name":"a","__proto__":{}}'),
      'SKILL_ENTRY_INVALID',
      '__proto__',
    ],
    // path
    ['a numeric path', { ...base, path: 1 }, 'SKILL_ENTRY_INVALID', 'path'],
    ['an absolute path', { ...base, path: '/etc' }, 'SKILL_PATH_UNSAFE', undefined],
    ['a path that escapes', { ...base, path: 'a/../../b' }, 'SKILL_PATH_UNSAFE', undefined],
    ['a path with a backslash', { ...base, path: 'a\\b' }, 'SKILL_PATH_UNSAFE', undefined],
    ['a path with NUL', { ...base, path: 'a\u0000b' }, 'SKILL_PATH_UNSAFE', undefined],
    ['a path with an empty segment', { ...base, path: 'a//b' }, 'SKILL_PATH_UNSAFE', undefined],
    // config
    ['an array config', { ...base, config: [] }, 'SKILL_ENTRY_INVALID', 'config'],
    ['a null config', { ...base, config: null }, 'SKILL_ENTRY_INVALID', 'config'],
    ['a string config', { ...base, config: 'x' }, 'SKILL_ENTRY_INVALID', 'config'],
    ['a Map config', { ...base, config: new Map() }, 'SKILL_ENTRY_INVALID', 'config'],
    ['a class instance config', { ...base, config: new (class Options {})() }, 'SKILL_ENTRY_INVALID', 'config'],
    ['an undefined config value', { ...base, config: { a: undefined } }, 'SKILL_ENTRY_INVALID', 'config.a'],
    ['a NaN config value', { ...base, config: { a: [1, Number.NaN] } }, 'SKILL_ENTRY_INVALID', 'config.a[1]'],
    [
      'a function config value',
      { ...base, config: { 'a-b': { c: () => 1 } } },
      'SKILL_ENTRY_INVALID',
      'config["a-b"].c',
    ],
    ['a Date config value', { ...base, config: { at: new Date(0) } }, 'SKILL_ENTRY_INVALID', 'config.at'],
    ['a bigint config value', { ...base, config: { n: 1n } }, 'SKILL_ENTRY_INVALID', 'config.n'],
    [
      'a config nested too deeply',
      { ...base, config: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) },
      'SKILL_ENTRY_INVALID',
      expect.stringMatching(/^config(\.a)+$/),
    ],
    // name
    ['an invalid name', { ...base, name: 'My Skill' }, 'SKILL_NAME_INVALID', undefined],
  ])('refuses %s', (_label, entry, code, field) => {
    const error = caught(() => parseSkillEntry(entry, 4));
    expect(error.code).toBe(code);
    expect(error.index).toBe(4);
    expect(error.message).toMatch(/^skill entry 4 /);
    if (field !== undefined) expect(error).toMatchObject({ field });
  });

  it.each([null, undefined, 42, true, [], ['a'], new Date(0)])(
    'refuses %j, which is neither a string nor an object',
    (entry) => {
      expect(caught(() => parseSkillEntry(entry, 0)).code).toBe('SKILL_ENTRY_INVALID');
    },
  );

  it('keeps a __proto__ config key as a key, without touching any prototype', () => {
    const parsed = parseSkillEntry({ ...base, config: JSON.parse('{"__proto__":{"polluted":true},"b":1}') }, 0);
    expect(Object.keys(parsed.config)).toEqual(['__proto__', 'b']);
    expect(Object.getPrototypeOf(parsed.config)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts an entry with a null prototype', () => {
    expect(parseSkillEntry(Object.assign(Object.create(null), base), 0).name).toBe('a');
  });

  it('renders an object entry with its source masked and its config hidden', () => {
    const error = caught(() =>
      parseSkillEntry(
        {
          provider: 'git',
          source: 'https://u:S3CRET@h.example/x',
          version: 'v',
          name: 'a',
          config: { token: 'S3CRET' },
        },
        1,
      ),
    );
    expect(error.entry).toBe('{ provider: "git", source: "https://***@h.example/x", version: "v", name: "a", … }');
    expect(texts(error).join('\n')).not.toContain('S3CRET');
  });
});

describe('the name rule (Agent Skills)', () => {
  it.each(['a', '0', 'a1', 'my-skill', 'a-b-c', 'x'.repeat(64)])('accepts %j', (name) => {
    expect(skillNameProblem(name)).toBeUndefined();
    expect(parseSkillEntry({ provider: 'p', source: 's', version: 'v', name }, 0).name).toBe(name);
  });

  it.each([
    ['', 'SKILL_ENTRY_INVALID'], // an empty name is a missing field
    ['A', 'SKILL_NAME_INVALID'],
    ['a_b', 'SKILL_NAME_INVALID'],
    ['a.b', 'SKILL_NAME_INVALID'],
    ['a b', 'SKILL_NAME_INVALID'],
    ['\u00e9', 'SKILL_NAME_INVALID'],
    ['-a', 'SKILL_NAME_INVALID'],
    ['a-', 'SKILL_NAME_INVALID'],
    ['a--b', 'SKILL_NAME_INVALID'],
    ['x'.repeat(65), 'SKILL_NAME_INVALID'],
  ])('refuses %j', (name, code) => {
    expect(skillNameProblem(name)).toBeDefined();
    const error = caught(() => parseSkillEntry({ provider: 'p', source: 's', version: 'v', name }, 0));
    expect(error.code).toBe(code);
    if (code === 'SKILL_NAME_INVALID') expect(error).toMatchObject({ derived: false });
  });
});

describe('declarations', () => {
  it.each([{}, 'https://github.com/org/skills', null, undefined, 1])('must be an array, not %j', (value) => {
    const error = caught(() => parseSkillDeclaration(value));
    expect(error.code).toBe('SKILL_DECLARATION_INVALID');
    expect(error.index).toBeUndefined();
  });

  it('may be empty', () => {
    expect(parseSkillDeclaration([])).toEqual([]);
  });

  it('parses strings and objects in order', () => {
    expect(
      parseSkillDeclaration([
        'https://github.com/org/skills#a',
        { provider: 'local', source: '/srv/skills', version: '1', name: 'b' },
      ]),
    ).toEqual([
      git('https://github.com/org/skills', 'HEAD', 'a', 'a'),
      { provider: 'local', source: '/srv/skills', version: '1', path: '', name: 'b', config: {} },
    ]);
  });

  it('throws the first problem, with the index and the text of its entry', () => {
    const error = caught(() =>
      parseSkillDeclaration(['https://github.com/org/skills#a', 'https://github.com/org/skills@a..b', 42]),
    );
    expect(error).toMatchObject({ code: 'SKILL_REF_INVALID', index: 1, entry: '"https://github.com/org/skills@a..b"' });
    expect(error.message).toBe('skill entry 1 "https://github.com/org/skills@a..b": ref "a..b" contains ..');
  });

  it('refuses a hole as an entry', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole is the entry this test refuses
    expect(caught(() => parseSkillDeclaration(['https://github.com/org/skills', , 'x'])).index).toBe(1);
  });

  it('refuses two entries that install the same name, naming both indexes', () => {
    const error = caught(() =>
      parseSkillDeclaration([
        'https://github.com/org/skills#skills/example',
        'https://github.com/org/other#b',
        { provider: 'git', source: 'git@code.example.com:team/skills.git', version: 'main', name: 'example' },
      ]),
    );
    expect(error).toBeInstanceOf(DuplicateSkillNameError);
    expect(error).toMatchObject({ code: 'SKILL_NAME_DUPLICATE', index: 2, firstIndex: 0, skillName: 'example' });
    expect(error.message).toMatch(/^skill entry 2 .*as entry 0 does/);
  });

  it('allows the same content under two names', () => {
    const base = { provider: 'git', source: 'https://github.com/org/skills', version: 'main', path: 'a' };
    expect(
      parseSkillDeclaration([
        { ...base, name: 'a' },
        { ...base, name: 'b' },
      ]),
    ).toHaveLength(2);
  });
});

describe('canonicalDeclaration', () => {
  const source: SkillSource = {
    provider: 'git',
    source: 'git@code.example.com:team/skills.git',
    version: 'main',
    path: 'skills/a',
    name: 'a',
    config: { b: 1, a: { d: [{ z: 1, y: 2 }], c: null } },
  };

  it('holds provider, source, version, path and config, in that order, and not the name', () => {
    const canonical = canonicalDeclaration(source);
    expect(Object.keys(canonical)).toEqual(['provider', 'source', 'version', 'path', 'config']);
    expect(JSON.stringify(canonical)).toBe(
      '{"provider":"git","source":"git@code.example.com:team/skills.git","version":"main","path":"skills/a",' +
        '"config":{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}}',
    );
  });

  it('is the same for entries that differ only in name or in config key order', () => {
    const other = { ...source, name: 'b', config: { a: { c: null, d: [{ y: 2, z: 1 }] }, b: 1 } };
    expect(JSON.stringify(canonicalDeclaration(other))).toBe(JSON.stringify(canonicalDeclaration(source)));
  });

  it.each([
    { version: 'v2' },
    { path: 'skills/b' },
    { source: 'git@code.example.com:team/other.git' },
    { provider: 'mirror' },
    { config: {} },
  ])('differs when %j differs', (patch) => {
    expect(JSON.stringify(canonicalDeclaration({ ...source, ...patch }))).not.toBe(
      JSON.stringify(canonicalDeclaration(source)),
    );
  });

  it('does not share config with the source', () => {
    const canonical = canonicalDeclaration(source);
    expect(canonical.config).not.toBe(source.config);
    expect(canonical.config.a).not.toBe((source.config as Record<string, unknown>).a);
  });
});

describe('errors', () => {
  it('are SkillErrors with a stable code, the class name, the index and the rendered entry', () => {
    const error = caught(() => parseSkillEntry('https://github.com/org/skills@a..b', 7));
    expect(error).toBeInstanceOf(SkillError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('SkillRefInvalidError');
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'SkillRefInvalidError',
      code: 'SKILL_REF_INVALID',
      index: 7,
      entry: '"https://github.com/org/skills@a..b"',
      ref: '"a..b"',
      reason: 'contains ..',
      message: error.message,
    });
  });

  it('limit the length of what they show', () => {
    const error = caught(() => parseGitString(`https://github.com/org/skills#${'a/'.repeat(500)}A`));
    expect(error.entry.length).toBeLessThan(200);
    expect(error.message.length).toBeLessThan(400);
  });

  it('keep the cause of a path refusal', () => {
    const error = caught(() => parseGitString('https://github.com/org/skills#../x'));
    expect((error.cause as { code?: string }).code).toBe('GIT_INVALID_PATH');
  });
});

// ---------------------------------------------------------------------------------------
// Properties

const nameSegment = fc.stringMatching(/^[a-z0-9]{1,4}(-[a-z0-9]{1,4}){0,2}$/);
// A label starting `xn--` is punycode, which the URL parser decodes and refuses when it is not valid.
const notPunycode = (text: string) => (text.startsWith('xn--') ? `x${text}` : text);
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?$/).map(notPunycode);
// The last label starts with a letter: `a.0` or `1.2.3` read as IPv4 addresses, invalid ones, and git refuses them.
const lastLabel = fc.stringMatching(/^[a-z]([a-z0-9-]{0,6}[a-z0-9])?$/).map(notPunycode);
const hostName = fc
  .tuple(fc.array(label, { minLength: 0, maxLength: 2 }), lastLabel)
  .map(([labels, last]) => [...labels, last].join('.'));
const refPart = fc
  .stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,8}$/)
  .filter((part) => !part.includes('..') && !part.endsWith('.') && !part.endsWith('.lock'));
const ref = fc.oneof(
  fc.stringMatching(/^[0-9a-f]{40}$/),
  fc.stringMatching(/^[0-9a-f]{4,39}$/),
  fc.array(refPart, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/')),
  fc.tuple(refPart, refPart).map(([a, b]) => `${a}@${b}`),
);
const gitParts = fc.record({
  form: fc.constantFrom('https', 'http', 'ssh', 'scp'),
  user: fc.option(fc.stringMatching(/^[a-z][a-z0-9_.-]{0,6}$/), { nil: undefined }),
  host: hostName,
  port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
  repository: fc.array(nameSegment, { minLength: 1, maxLength: 3 }),
  dotGit: fc.boolean(),
  ref: fc.option(ref, { nil: undefined }),
  directory: fc.option(fc.array(nameSegment, { minLength: 1, maxLength: 3 }), { nil: undefined }),
  trailingSlash: fc.boolean(),
});

/**
 * A git string the grammar accepts (see parseGitString), with the parts it must parse into.
 * Built from the grammar's own pieces, so every generated string is valid: URL forms in any
 * scheme case, with a port, a user for ssh, a bracketed IPv6 host; scp-like forms with or
 * without a user, `~/` paths; `.git` suffixes and trailing slashes; refs with `/` and `@`,
 * commit ids, hex in either case, `HEAD` and full ref names; directories with a trailing
 * slash, `.` for the root, and segments holding `.`, `@`, `~`, `+`.
 */
const validGitString = fc
  .record({
    form: fc.constantFrom('url', 'scp'),
    scheme: fc.constantFrom('https', 'http', 'ssh', 'HTTPS', 'Ssh'),
    user: fc.option(fc.stringMatching(/^[a-z][a-z0-9_.-]{0,6}$/), { nil: undefined }),
    host: fc.oneof(
      { weight: 4, arbitrary: hostName },
      { weight: 1, arbitrary: fc.constantFrom('[::1]', '[2001:db8::7]') },
    ),
    port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
    home: fc.boolean(),
    parents: fc.array(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.~-]{0,7}$/), { maxLength: 2 }),
    repository: nameSegment,
    dotGit: fc.boolean(),
    repositorySlash: fc.boolean(),
    ref: fc.option(
      fc.oneof(
        ref,
        fc.stringMatching(/^[0-9a-fA-F]{4,40}$/),
        fc.constant('HEAD'),
        fc.tuple(fc.constantFrom('refs/heads/', 'refs/tags/'), refPart).map(([prefix, part]) => prefix + part),
      ),
      { nil: undefined },
    ),
    directory: fc.option(
      fc.oneof(
        {
          weight: 5,
          arbitrary: fc.tuple(
            fc.array(fc.stringMatching(/^[A-Za-z0-9_@~+-][A-Za-z0-9_.@~+-]{0,7}$/), { maxLength: 2 }),
            nameSegment,
            fc.boolean(),
          ),
        },
        { weight: 1, arbitrary: fc.constant('.' as const) },
      ),
      { nil: undefined },
    ),
  })
  .map((parts) => {
    const scp = parts.form === 'scp';
    const ssh = scp || parts.scheme.toLowerCase() === 'ssh';
    const user = ssh ? parts.user : undefined;
    // An IPv6 host in the scp-like form needs a user (`git@[::1]:path`).
    const host = scp && user === undefined && parts.host.startsWith('[') ? 'host.example' : parts.host;
    // `host:name@ref` (no user, one segment, no .git) reads as user:password@host: refused, see readsAsPassword.
    const dotGit =
      parts.dotGit ||
      (scp && user === undefined && parts.ref !== undefined && parts.parents.length === 0 && !parts.home);
    const repositoryPath = [...parts.parents, parts.repository + (dotGit ? '.git' : '')].join('/');
    const written = repositoryPath + (parts.repositorySlash ? '/' : '');
    const userinfo = user === undefined ? '' : `${user}@`;
    const source = scp
      ? `${userinfo}${host}:${parts.home ? '~/' : ''}${written}`
      : `${parts.scheme}://${userinfo}${host}${parts.port === undefined ? '' : `:${parts.port}`}/${written}`;
    let directory = '';
    let path = '';
    let name = parts.repository;
    if (parts.directory === '.') directory = '#.';
    else if (parts.directory !== undefined) {
      const [dirParents, last, slash] = parts.directory;
      path = [...dirParents, last].join('/');
      directory = `#${path}${slash ? '/' : ''}`;
      name = last;
    }
    return {
      text: source + (parts.ref === undefined ? '' : `@${parts.ref}`) + directory,
      source,
      version: parts.ref ?? 'HEAD',
      path,
      name,
    };
  });

describe('properties', () => {
  it('formatting a git string then parsing it gives back its parts', () => {
    fc.assert(
      fc.property(gitParts, (parts) => {
        const path = parts.repository.join('/') + (parts.dotGit ? '.git' : '');
        const user = parts.form === 'ssh' || parts.form === 'scp' ? parts.user : undefined;
        const userinfo = user === undefined ? '' : `${user}@`;
        const source =
          parts.form === 'scp'
            ? `${userinfo}${parts.host}:${path}`
            : `${parts.form}://${userinfo}${parts.host}${parts.port === undefined ? '' : `:${parts.port}`}/${path}`;
        const directory = parts.directory?.join('/');
        const text =
          source +
          (parts.ref === undefined ? '' : `@${parts.ref}`) +
          (directory === undefined ? '' : `#${directory}${parts.trailingSlash ? '/' : ''}`);

        if (
          parts.form === 'scp' &&
          user === undefined &&
          parts.ref !== undefined &&
          parts.repository.length === 1 &&
          !parts.dotGit
        ) {
          // `host:name@x` is what `user:password@x` looks like: refused, see readsAsPassword.
          expect(caught(() => parseGitString(text)).code).toBe('SKILL_URL_HAS_CREDENTIALS');
          return;
        }
        const parsed = parseGitString(text);
        expect(parsed).toEqual({
          provider: 'git',
          source,
          version: parts.ref ?? 'HEAD',
          path: directory ?? '',
          name: parts.directory?.at(-1) ?? parts.repository.at(-1),
          config: {},
        });
        expect(parseSkillEntry({ ...parsed }, 0)).toEqual(parsed);
        expect(parseGitRepository(source)).toMatchObject({
          host: parts.host,
          user,
          path: parts.form === 'scp' ? path : `/${path}`,
        });
      }),
      { numRuns: 3000 },
    );
  });

  const piece = fc.constantFrom(
    'https://',
    'http://',
    'ssh://',
    'git://',
    'git@',
    'alice:',
    '@',
    ':',
    '/',
    '//',
    '#',
    '?',
    '..',
    '.',
    '.git',
    'host.example',
    '[::1]',
    '[',
    ']',
    ':2222',
    ':0',
    '~',
    '-',
    '%2e',
    '\\',
    ' ',
    '\u0000',
    '\n',
    '\u00e9',
    'main',
    '@{1}',
    'a..b',
    COMMIT,
    'SKILL',
    '',
  );
  const gitish = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''));
  const anyString = fc.oneof(gitish, fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }));

  it('parsing any string returns a git source or throws a SkillEntryError, nothing else', () => {
    fc.assert(
      fc.property(anyString, fc.nat(10), (text, index) => {
        for (const parse of [
          () => parseGitString(text),
          () => parseSkillEntry(text, index),
          () => parseGitRepository(text),
        ]) {
          try {
            parse();
          } catch (error) {
            expect(error).toBeInstanceOf(SkillEntryError);
          }
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('a parsed git string always has a valid name, a normalized path and a source without @ref or #directory', () => {
    // Every run parses: the strings are made by the grammar (validGitString), so every run asserts.
    fc.assert(
      fc.property(validGitString, ({ text, source, version, path, name }) => {
        const parsed = parseGitString(text);
        expect(parsed).toEqual({ provider: 'git', source, version, path, name, config: {} });
        expect(skillNameProblem(parsed.name)).toBeUndefined();
        expect(parsed.path).not.toMatch(/^\/|\/$|\/\/|\\/);
        expect(text.startsWith(parsed.source)).toBe(true);
        expect(parsed.source).not.toContain('#');
      }),
      { numRuns: 3000 },
    );
  });

  it('parsing any value as an entry returns a source or throws a SkillEntryError, nothing else', () => {
    const entryish = fc.oneof(
      fc.anything({
        withNullPrototype: true,
        withMap: true,
        withSet: true,
        withDate: true,
        withBigInt: true,
        withSparseArray: true,
      }),
      fc.record(
        {
          provider: fc.constantFrom('git', 'local', '', 1),
          source: anyString,
          version: fc.oneof(ref, anyString),
          path: anyString,
          name: fc.oneof(nameSegment, anyString),
          config: fc.anything(),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(fc.array(entryish, { maxLength: 4 }), (entries) => {
        try {
          parseSkillDeclaration(entries);
        } catch (error) {
          expect(error).toBeInstanceOf(SkillEntryError);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('a password in a URL (or written as user:password@host) never appears in an error', () => {
    const junk = fc
      .array(fc.constantFrom('/', '#', '?', '@', ':', 'x', '9', '.', '..', ' ', 'a..b'), { maxLength: 6 })
      .map((p) => p.join(''));
    const password = fc
      .array(fc.constantFrom('/', '#', '?', '@', ':', 'x', '9', '-', '%40'), { maxLength: 6 })
      .map((tail) => `S3CRET${tail.join('')}`);
    // A token that is itself a valid host name followed by "/" (`https://S3CRET/x@host/…`)
    // reads as a host and a path; nothing can tell them apart, so tokens here hold no "/", "#", "?".
    const token = fc
      .array(fc.constantFrom('@', ':', 'x', '9', '-', '%40', '+', '='), { maxLength: 6 })
      .map((tail) => `S3CRET${tail.join('')}`);
    fc.assert(
      fc.property(
        fc.constantFrom('https://', 'http://', 'ssh://', 'ftp://'),
        password,
        token,
        hostName,
        junk,
        (scheme, secret, tokenText, host, rest) => {
          for (const text of [
            `${scheme}alice:${secret}@${host}/team/skills.git${rest}`,
            `${scheme}${tokenText}@${host}/x${rest}`,
          ]) {
            let error: unknown;
            try {
              parseGitString(text);
            } catch (thrown) {
              error = thrown;
            }
            // ssh:// accepts a plain login name; "S3CRET…" without ":" is one only if it is made of login-name characters.
            if (error === undefined) {
              expect(scheme === 'ssh://' && !text.includes(':S3CRET')).toBe(true);
              continue;
            }
            expect(error).toBeInstanceOf(SkillEntryError);
            if (scheme === 'ssh://' && !text.includes(':S3CRET') && /^S3CRET[x9-]*@/.test(text.slice(scheme.length)))
              continue;
            for (const shown of texts(error as SkillEntryError)) expect(shown).not.toContain('S3CRET');
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('masking is for credentials only', () => {
  it('a file:// URL or a local path is shown as written in an error; a URL with a password is not', () => {
    const shown = (text: string) => {
      try {
        parseGitString(text);
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(shown('file:///srv/git/skills.git@main#skills/review')).toContain(
      '"file:///srv/git/skills.git@main#skills/review"',
    );
    expect(shown('/srv/git/skills.git@main#skills/review')).toContain('"/srv/git/skills.git@main#skills/review"');
    expect(shown('./skills.git@v1#skills/review')).toContain('"./skills.git@v1#skills/review"');
    expect(shown('../team/skills.git@v1#x')).toContain('"../team/skills.git@v1#x"');
    const secret = shown('https://bot:S3CRET@git.example.com/a/skills.git#x');
    expect(secret).not.toContain('S3CRET');
    expect(shown('file://bot:S3CRET@host/skills.git#x')).not.toContain('S3CRET');
    expect(shown('https:///bot:S3CRET@host/skills.git#x')).not.toContain('S3CRET');
  });
});
