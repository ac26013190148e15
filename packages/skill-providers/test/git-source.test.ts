import { describe, expect, it } from 'vitest';
import { gitProvider, parseGitString } from '@agentproto/skill-providers';
import { parseSkillDeclaration, parseSkillEntry } from '../src/entries/index.js';
import { gitSourceOf } from '../src/git/source.js';
import type { SkillSource } from '../src/provider.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const UPPER = COMMIT.toUpperCase();
const REPO = 'https://git.example.com/team/skills.git';

describe('the git source grammar: one ref rule', () => {
  it.each([
    ['40 lower-case hex digits: a commit id, used as is', COMMIT, { kind: 'commit', commit: COMMIT }],
    // Under a rule that took hex of either case as a commit id, this one would be a commit.
    [
      '40 hex digits with upper case: a name (the remote resolution refuses it, naming the lower-case id)',
      UPPER,
      { kind: 'name', name: UPPER },
    ],
    ['mixed case', `A${COMMIT.slice(1)}`, { kind: 'name', name: `A${COMMIT.slice(1)}` }],
    [
      'an abbreviated id: a name first (a ref of that name wins), then an abbreviation',
      '0123abc',
      { kind: 'name', name: '0123abc' },
    ],
    ['an upper-case abbreviation', '0123ABC', { kind: 'name', name: '0123ABC' }],
    ['41 hex digits', `${COMMIT}0`, { kind: 'name', name: `${COMMIT}0` }],
    ['HEAD', 'HEAD', { kind: 'name', name: 'HEAD' }],
    ['a branch with / and @', 'release/2.0@rc', { kind: 'name', name: 'release/2.0@rc' }],
  ])('%s', (_what, version, ref) => {
    // The git string, the object entry and a source built by hand all read it the same way.
    expect(gitSourceOf(parseGitString(`${REPO}@${version}#skills/a`)).ref).toEqual(ref);
    const object = { provider: 'git', source: REPO, version, path: 'skills/a', name: 'a' };
    expect(gitSourceOf(parseSkillEntry(object, 0)).ref).toEqual(ref);
    expect(gitSourceOf({ ...object, config: {} }).ref).toEqual(ref);
    expect(() => gitProvider().validate({ ...object, config: {} })).not.toThrow();
  });

  it('a version that is no ref name is refused alike by the parser and by the provider', () => {
    const object = { provider: 'git', source: REPO, version: 'a..b', path: 'skills/a', name: 'a' };
    expect(() => parseSkillEntry(object, 0)).toThrow(expect.objectContaining({ code: 'SKILL_REF_INVALID' }));
    expect(() => gitProvider().validate({ ...object, config: {} })).toThrow(
      `${REPO}: config.version is not a commit id or a ref name: contains ..`,
    );
  });
});

describe('the git source is read once', () => {
  it('the provider uses the reading the entry parser made for the object it returned', () => {
    const [parsed] = parseSkillDeclaration([`${REPO}@main#skills/a`]) as [SkillSource];
    const git = gitSourceOf(parsed);
    expect(gitSourceOf(parsed)).toBe(git);
    expect(git).toMatchObject({
      repository: REPO,
      url: REPO,
      path: 'skills/a',
      ref: { kind: 'name', name: 'main' },
      location: { transport: 'https', egress: 'git.example.com' },
    });
    // A copy is another object: read again, to an equal source.
    const copy = { ...parsed };
    expect(gitSourceOf(copy)).not.toBe(git);
    expect(gitSourceOf(copy)).toEqual(git);
  });

  it('a source changed after parsing is read again, never answered from the old reading', () => {
    const parsed = parseGitString(`${REPO}@main#skills/a`);
    expect(gitProvider().egressHosts(parsed)).toEqual(['git.example.com']);
    parsed.source = 'ssh://git@other.example.com:2222/team/skills.git';
    parsed.version = COMMIT;
    expect(gitSourceOf(parsed)).toMatchObject({
      ref: { kind: 'commit', commit: COMMIT },
      location: { transport: 'ssh' },
    });
    expect(gitProvider().egressHosts(parsed)).toEqual(['other.example.com:2222']);
  });

  it.each([
    // The URL parser's host and port: lower-cased for http(s), a default port left out.
    ['https://Git.Example.COM:443/team/skills.git', 'git.example.com', 'https'],
    ['https://git.example.com:8443/team/skills', 'git.example.com:8443', 'https'],
    ['http://127.0.0.1:8080/team/skills.git', '127.0.0.1:8080', 'https'],
    ['https://[::1]:8443/team/skills.git', '[::1]:8443', 'https'],
    ['ssh://git@code.example.com:2222/team/skills.git', 'code.example.com:2222', 'ssh'],
    ['ssh://git@code.example.com/team/skills.git', 'code.example.com', 'ssh'],
    ['git@code.example.com:team/skills.git', 'code.example.com', 'ssh'],
    ['git@[::1]:team/skills.git', '[::1]', 'ssh'],
  ])('%s is reached at %s', (source, egress, transport) => {
    const parsed = parseGitString(`${source}#skills/a`);
    expect(gitSourceOf(parsed).location).toMatchObject({ egress, transport });
    expect(gitProvider().egressHosts(parsed)).toEqual([egress]);
  });

  it('a source built by hand that the grammar refuses is SKILL_CONFIG_INVALID, its credentials masked', () => {
    const provider = gitProvider();
    const refused = (source: string) => {
      try {
        provider.validate({ provider: 'git', source, version: 'main', path: 'skills/a', name: 'a', config: {} });
      } catch (error) {
        return error as Error & { code: string; source: string };
      }
      throw new Error(`${source} was accepted`);
    };
    const credentials = refused('https://alice:S3CRET@git.example.com/team/skills.git');
    expect(credentials).toMatchObject({
      code: 'SKILL_CONFIG_INVALID',
      source: 'https://***@git.example.com/team/skills.git',
    });
    expect(JSON.stringify(credentials) + credentials.message).not.toContain('S3CRET');
    expect(refused('git://git.example.com/team/skills.git').message).toBe(
      'git://git.example.com/team/skills.git: config.source uses the scheme "git"; use https://, http://, ssh:// or user@host:path',
    );
  });

  it('a source or version built by hand that is not a string is SKILL_CONFIG_INVALID, never a TypeError', () => {
    const provider = gitProvider();
    for (const [source, version] of [
      [42, 'main'],
      [{ toString: null }, 'main'],
      [REPO, 7n],
      [REPO, { toString: null }],
    ] as const) {
      expect(() =>
        provider.validate({ provider: 'git', source, version, path: '', name: 'a', config: {} } as never),
      ).toThrow(expect.objectContaining({ code: 'SKILL_CONFIG_INVALID' }));
    }
  });

  it('plain http to a host that is not loopback stays the provider option it was', () => {
    const source = {
      provider: 'git',
      source: 'http://git.example.com/team/skills.git',
      version: 'main',
      path: '',
      name: 'skills',
      config: {},
    };
    const [parsed] = parseSkillDeclaration([source]) as [SkillSource];
    expect(() => gitProvider().validate(parsed)).toThrow(expect.objectContaining({ code: 'SKILL_CONFIG_INVALID' }));
    expect(() => gitProvider({ allowInsecureHttp: true }).validate(parsed)).not.toThrow();
  });
});
