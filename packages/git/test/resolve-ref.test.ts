import { describe, expect, it } from 'vitest';
import { makeRepo } from '@agentproto/testkit';
import { listRefs, resolveRef, type RemoteRefs } from '../src/index.js';
import { scratch, serve } from './support/fixtures.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const D = 'd'.repeat(40);
const T = 'e'.repeat(40); // the annotated tag object
const F = 'f'.repeat(40);

const refs: RemoteRefs = {
  url: 'https://git.example.com/skills.git',
  refs: [
    { name: 'HEAD', oid: A, symref: 'refs/heads/main' },
    { name: 'refs/heads/cafe1234', oid: F },
    { name: 'refs/heads/dev', oid: B },
    { name: 'refs/heads/feature/x', oid: C },
    { name: 'refs/heads/main', oid: A },
    { name: 'refs/heads/same', oid: B },
    { name: 'refs/tags/same', oid: C },
    { name: 'refs/tags/v1', oid: T, peeled: D },
    { name: 'refs/tags/v0', oid: C },
  ],
};

describe('resolveRef', () => {
  it.each([
    ['a full lower-case commit id is used as is', D, { ref: D, commit: D, kind: 'commit' }],
    [
      'an id nobody advertises is still used as is',
      '0123456789abcdef0123456789abcdef01234567',
      {
        ref: '0123456789abcdef0123456789abcdef01234567',
        commit: '0123456789abcdef0123456789abcdef01234567',
        kind: 'commit',
      },
    ],
    ['a branch by short name', 'dev', { ref: 'refs/heads/dev', commit: B, kind: 'branch' }],
    ['a branch with a slash', 'feature/x', { ref: 'refs/heads/feature/x', commit: C, kind: 'branch' }],
    ['a branch by full name', 'refs/heads/main', { ref: 'refs/heads/main', commit: A, kind: 'branch' }],
    ['a lightweight tag', 'v0', { ref: 'refs/tags/v0', commit: C, kind: 'tag' }],
    [
      'an annotated tag resolves to its peeled commit, never the tag object',
      'v1',
      { ref: 'refs/tags/v1', commit: D, kind: 'tag' },
    ],
    ['an annotated tag by full name', 'refs/tags/v1', { ref: 'refs/tags/v1', commit: D, kind: 'tag' }],
    [
      'the same name given in full as a branch',
      'refs/heads/same',
      { ref: 'refs/heads/same', commit: B, kind: 'branch' },
    ],
    ['the same name given in full as a tag', 'refs/tags/same', { ref: 'refs/tags/same', commit: C, kind: 'tag' }],
    ['HEAD is followed to its branch', 'HEAD', { ref: 'HEAD', commit: A, kind: 'head', target: 'refs/heads/main' }],
    [
      'a hex-looking name that is a branch is the branch (refs win, as in git)',
      'cafe1234',
      {
        ref: 'refs/heads/cafe1234',
        commit: F,
        kind: 'branch',
      },
    ],
  ])('%s', (_rule, name, expected) => {
    expect(resolveRef(refs, name)).toEqual(expected);
  });

  it('refuses a short name that is both a branch and a tag, naming both full names', () => {
    let caught: unknown;
    try {
      resolveRef(refs, 'same');
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: 'GIT_AMBIGUOUS_REF',
      ref: 'same',
      candidates: ['refs/heads/same', 'refs/tags/same'],
    });
    expect((caught as Error).message).toContain('refs/heads/same');
    expect((caught as Error).message).toContain('refs/tags/same');
  });

  it.each([
    ['an upper-case commit id', D.toUpperCase(), 'GIT_UPPERCASE_SHA'],
    ['a mixed-case commit id', `D${D.slice(1)}`, 'GIT_UPPERCASE_SHA'],
    ['a 7-digit abbreviation', 'ddddddd', 'GIT_ABBREVIATED_SHA'],
    ['a 39-digit abbreviation', D.slice(1), 'GIT_ABBREVIATED_SHA'],
    ['a 4-digit abbreviation', 'dddd', 'GIT_ABBREVIATED_SHA'],
    ['an upper-case abbreviation', 'DDDDDDD', 'GIT_ABBREVIATED_SHA'],
    ['a missing branch', 'nope', 'GIT_REF_NOT_FOUND'],
    ['a missing full branch name', 'refs/heads/nope', 'GIT_REF_NOT_FOUND'],
    ['a missing full tag name', 'refs/tags/nope', 'GIT_REF_NOT_FOUND'],
    ['a name in another namespace', 'refs/pull/1/head', 'GIT_INVALID_REF_NAME'],
    ['a remote-tracking name', 'refs/remotes/origin/main', 'GIT_INVALID_REF_NAME'],
  ])('refuses %s', (_rule, name, code) => {
    expect(() => resolveRef(refs, name)).toThrow(expect.objectContaining({ code }));
  });

  it('says why an abbreviation cannot be resolved', () => {
    expect(() => resolveRef(refs, 'ddddddd')).toThrow(/full 40-character commit id/);
    expect(() => resolveRef(refs, 'ddddddd')).toThrow(/clone/);
  });

  it('names the missing ref and where it looked', () => {
    expect(() => resolveRef(refs, 'nope')).toThrow(
      expect.objectContaining({ ref: 'nope', url: refs.url, tried: ['refs/heads/nope', 'refs/tags/nope'] }),
    );
  });

  it('refuses HEAD when the remote has none (an empty repository)', () => {
    expect(() => resolveRef({ url: refs.url, refs: [] }, 'HEAD')).toThrow(
      expect.objectContaining({ code: 'GIT_REF_NOT_FOUND' }),
    );
  });

  it('follows a detached HEAD to its own commit', () => {
    expect(resolveRef({ url: refs.url, refs: [{ name: 'HEAD', oid: B }] }, 'HEAD')).toEqual({
      ref: 'HEAD',
      commit: B,
      kind: 'head',
    });
  });

  it.each([
    'main..dev',
    'main~1',
    'main^',
    'main^{}',
    'main@{1}',
    '@',
    'a//b',
    '/main',
    'main/',
    'main.lock',
    '.main',
    'main.',
    'a b',
    'a:b',
    'a?',
    'a*',
    'a[b',
    'a\\b',
    'a\u0000b',
    'a\u001bb',
    '-main',
    'a%2fb',
    '',
  ])('refuses the malformed name %j before any lookup', (name) => {
    // Even a ref list that holds the name verbatim does not make it acceptable.
    const poisoned: RemoteRefs = { url: refs.url, refs: [{ name: `refs/heads/${name}`, oid: A }] };
    expect(() => resolveRef(poisoned, name)).toThrow(expect.objectContaining({ code: 'GIT_INVALID_REF_NAME' }));
  });
});

describe('resolveRef against a real server', () => {
  it('resolves what listRefs returns the way git rev-parse sees the repository', async () => {
    const root = await scratch();
    const repo = await makeRepo({
      root,
      name: 'skills.git',
      commits: [
        { files: { 'skills/a/SKILL.md': 'a0' } },
        { branch: 'dev', files: { 'skills/a/SKILL.md': 'dev' } },
        { branch: 'main', files: { 'skills/a/SKILL.md': 'a2' } },
      ],
      tags: [
        { name: 'v1', target: 0, annotated: true },
        { name: 'light', target: 1 },
        { name: 'dev', target: 0 },
      ],
    });
    const server = await serve({ root });
    const listed = await listRefs(server.urlFor('skills.git'));
    expect(resolveRef(listed, 'main')).toEqual({ ref: 'refs/heads/main', commit: repo.commits[2], kind: 'branch' });
    expect(resolveRef(listed, 'v1')).toEqual({ ref: 'refs/tags/v1', commit: repo.commits[0], kind: 'tag' });
    expect(resolveRef(listed, 'light')).toEqual({ ref: 'refs/tags/light', commit: repo.commits[1], kind: 'tag' });
    expect(resolveRef(listed, 'HEAD')).toEqual({
      ref: 'HEAD',
      commit: repo.commits[2],
      kind: 'head',
      target: 'refs/heads/main',
    });
    expect(resolveRef(listed, 'refs/heads/dev').commit).toBe(repo.commits[1]);
    expect(resolveRef(listed, 'refs/tags/dev').commit).toBe(repo.commits[0]);
    expect(() => resolveRef(listed, 'dev')).toThrow(expect.objectContaining({ code: 'GIT_AMBIGUOUS_REF' }));
    expect((await repo.git('rev-parse', 'v1^{commit}')).trim()).toBe(repo.commits[0]);
  });
});
