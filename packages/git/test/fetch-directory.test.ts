import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, type MadeRepo } from '@agentproto/testkit';
import { directoryTree, fetchDirectory, isomorphicGitEngine, listRefs, type GitEngine } from '../src/index.js';
import { blob, commitOf, commitTree, rawTree } from './support/crafted.js';
import { listTree, rejection, scratch, serve } from './support/fixtures.js';

/** A repository with executable files, links inside and outside, and three commits of skills/a. */
async function skillsRepo(root: string): Promise<MadeRepo> {
  return makeRepo({
    root,
    name: 'skills.git',
    commits: [
      {
        files: {
          'skills/a/SKILL.md': 'a v0',
          'skills/a/run.sh': { content: '#!/bin/sh\necho a\n', executable: true },
          'skills/a/docs/guide.md': 'guide',
          'skills/a/docs/up': { symlink: '../SKILL.md' },
          'skills/a/link-file': { symlink: 'docs/guide.md' },
          'skills/a/link-dir': { symlink: 'docs' },
          'skills/b/SKILL.md': 'b',
          'skills/b/sibling': { symlink: '../a/SKILL.md' },
          'skills/c/SKILL.md': 'c',
          'evil/SKILL.md': 'evil',
          'evil/passwd': { symlink: '../../../etc/passwd' },
          'README.md': 'readme',
        },
      },
      { files: { 'skills/a/SKILL.md': 'a v1' } },
      { files: { 'skills/a/SKILL.md': 'a v2' } },
    ],
    tags: [{ name: 'v1', target: 1, annotated: true }],
  });
}

async function setup() {
  const root = await scratch();
  const work = await scratch();
  const repo = await skillsRepo(root);
  const server = await serve({ root });
  return { root, work, repo, server, url: server.urlFor('skills.git') };
}

describe('fetchDirectory', () => {
  it("writes exactly the directory's files, with their executable bits and the links that stay inside", async () => {
    const { work, repo, url } = await setup();
    const dest = join(work, 'out');
    const result = await fetchDirectory(url, repo.commits[2] as string, 'skills/a', dest);

    expect(await listTree(dest)).toEqual({
      'SKILL.md': 'file 644 a v2',
      docs: 'dir',
      'docs/guide.md': 'file 644 guide',
      'docs/up': 'link ../SKILL.md',
      'link-dir': 'link docs',
      'link-file': 'link docs/guide.md',
      'run.sh': 'file 755 #!/bin/sh\necho a\n',
    });
    expect(result).toEqual({
      commit: repo.commits[2],
      tree: await repo.treeOf(2, 'skills/a'),
      path: 'skills/a',
      files: 3,
      symlinks: 3,
      bytes: 'a v2'.length + 'guide'.length + '#!/bin/sh\necho a\n'.length,
      submodules: [],
    });
  });

  it.each([
    ['', ''],
    ['.', ''],
    ['./', ''],
    ['skills/', 'skills'],
    ['skills', 'skills'],
  ])('takes %j as the directory %j', async (path, normalized) => {
    const root = await scratch();
    const work = await scratch();
    const repo = await makeRepo({
      root,
      name: 'r.git',
      commits: [{ files: { 'skills/a/SKILL.md': 'a', 'top.md': 'top' } }],
    });
    const server = await serve({ root });
    const dest = join(work, 'out');
    const result = await fetchDirectory(server.urlFor('r.git'), repo.commits[0] as string, path, dest);
    expect(result.path).toBe(normalized);
    expect(result.tree).toBe(await repo.treeOf(0, normalized));
    expect(await listTree(dest)).toEqual(
      normalized === ''
        ? { skills: 'dir', 'skills/a': 'dir', 'skills/a/SKILL.md': 'file 644 a', 'top.md': 'file 644 top' }
        : { a: 'dir', 'a/SKILL.md': 'file 644 a' },
    );
  });

  it('gives the same tree id for the same content at another commit', async () => {
    const { work, repo, url } = await setup();
    const atZero = await fetchDirectory(url, repo.commits[0] as string, 'skills/c', join(work, 'zero'));
    const atTwo = await fetchDirectory(url, repo.commits[2] as string, 'skills/c', join(work, 'two'));
    expect(atZero.tree).toBe(atTwo.tree);
    expect(atZero.commit).not.toBe(atTwo.commit);
  });

  it('accepts a link that leaves its own folder but stays inside the fetched directory', async () => {
    const { work, repo, url } = await setup();
    const dest = join(work, 'out');
    await fetchDirectory(url, repo.commits[2] as string, 'skills', dest);
    expect((await listTree(dest))['b/sibling']).toBe('link ../a/SKILL.md');
  });

  it.each([
    ['skills/b', 'sibling', '../a/SKILL.md'],
    ['evil', 'passwd', '../../../etc/passwd'],
    ['', 'evil/passwd', '../../../etc/passwd'],
  ])('refuses %j, whose link %s leads outside, and writes nothing', async (path, link, target) => {
    const { work, repo, url } = await setup();
    const dest = join(work, 'out');
    const error = await rejection(fetchDirectory(url, repo.commits[2] as string, path, dest));
    expect(error).toMatchObject({ code: 'GIT_UNSAFE_TREE', path: link, target });
    expect(existsSync(dest)).toBe(false);
  });

  it.each([
    ['README.md', 'file'],
    ['skills/a/run.sh', 'file'],
    ['skills/a/link-dir', 'symlink'],
    ['nope', 'missing'],
    ['skills/nope', 'missing'],
    ['README.md/x', 'file'],
  ])('refuses %j, which is not a directory (%s)', async (path, found) => {
    const { work, repo, url } = await setup();
    const dest = join(work, 'out');
    const error = await rejection(fetchDirectory(url, repo.commits[2] as string, path, dest));
    expect(error).toMatchObject({ code: 'GIT_NOT_A_DIRECTORY', path, found, commit: repo.commits[2] });
    expect(existsSync(dest)).toBe(false);
  });

  it("fetches an older commit that is no longer any branch's tip", async () => {
    const { work, repo, url } = await setup();
    const refs = await listRefs(url);
    expect(refs.refs.some((ref) => ref.oid === repo.commits[0] || ref.peeled === repo.commits[0])).toBe(false);
    const dest = join(work, 'out');
    await fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest);
    expect((await listTree(dest))['SKILL.md']).toBe('file 644 a v0');
  });

  it('fetches the commit an annotated tag peels to', async () => {
    const { work, repo, url } = await setup();
    const dest = join(work, 'out');
    await fetchDirectory(url, repo.commits[1] as string, 'skills/a', dest);
    expect((await listTree(dest))['SKILL.md']).toBe('file 644 a v1');
  });

  it('refuses the id of an annotated tag object: only commits are fetched', async () => {
    const { work, repo, url } = await setup();
    const tagObject = (await repo.refs())['refs/tags/v1'] as string;
    const error = await rejection(fetchDirectory(url, tagObject, 'skills/a', join(work, 'out')));
    expect(error).toMatchObject({ code: 'GIT_NOT_A_COMMIT', oid: tagObject, type: 'tag' });
  });

  it('reports a commit the server does not have as GIT_COMMIT_UNAVAILABLE', async () => {
    const { work, url } = await setup();
    const missing = '0123456789abcdef0123456789abcdef01234567';
    const error = await rejection(fetchDirectory(url, missing, 'skills/a', join(work, 'out')));
    expect(error).toMatchObject({ code: 'GIT_COMMIT_UNAVAILABLE', commit: missing, url });
  });

  it('fetches a commit no ref reaches any more (force-pushed away) from a server that allows any id in a want', async () => {
    const root = await scratch();
    const work = await scratch();
    const repo = await makeRepo({
      root,
      name: 'r.git',
      commits: [
        { files: { 'a/x.md': 'x0' } },
        { files: { 'a/x.md': 'x1' } },
        { branch: 'main', from: 0, files: { 'a/x.md': 'forced' } },
      ],
    });
    const server = await serve({ root });
    // The object is still in the server's repository, only unreachable; the testkit server
    // runs upload-pack with uploadpack.allowAnySHA1InWant, so it is sent. Without that
    // setting a protocol v0 server answers "not our ref" (GIT_COMMIT_UNAVAILABLE, as for
    // a commit that does not exist: tested above).
    expect((await repo.git('cat-file', '-t', repo.commits[1] as string)).trim()).toBe('commit');
    const dest = join(work, 'out');
    await fetchDirectory(server.urlFor('r.git'), repo.commits[1] as string, 'a', dest);
    expect(await listTree(dest)).toEqual({ 'x.md': 'file 644 x1' });
  });

  it.each([
    ['an abbreviation', 'abc1234', 'GIT_ABBREVIATED_SHA'],
    ['an upper-case id', 'ABCDEF0123456789ABCDEF0123456789ABCDEF01', 'GIT_UPPERCASE_SHA'],
    ['a branch name', 'main', 'GIT_INVALID_COMMIT_ID'],
    ['an empty string', '', 'GIT_INVALID_COMMIT_ID'],
  ])('refuses %s as the commit before sending anything', async (_what, commit, code) => {
    const { work, url, server } = await setup();
    const error = await rejection(fetchDirectory(url, commit, 'skills/a', join(work, 'out')));
    expect(error).toMatchObject({ code });
    expect(server.stats.requests).toBe(0);
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it.each([
    ['/skills', 'is absolute (paths are relative to the repository root)'],
    ['../skills', 'has a .. segment'],
    ['skills/../evil', 'has a .. segment'],
    ['skills/./a', 'has a . segment'],
    ['skills//a', 'has an empty segment (//)'],
    ['skills\\a', 'contains a backslash (use /)'],
    ['skills/a\u0000', 'contains a control character or NUL'],
    ['.git', 'names a .git folder'],
    ['skills/.GIT/hooks', 'names a .git folder'],
  ])('refuses the path %j before sending anything: %s', async (path, reason) => {
    const { work, repo, url, server } = await setup();
    const error = await rejection(fetchDirectory(url, repo.commits[2] as string, path, join(work, 'out')));
    expect(error).toMatchObject({ code: 'GIT_INVALID_PATH', reason });
    expect(server.stats.requests).toBe(0);
  });

  it('refuses a destination that exists, and leaves it as it was', async () => {
    const { work, repo, url, server } = await setup();
    const dest = join(work, 'out');
    await mkdir(dest);
    await writeFile(join(dest, 'mine.txt'), 'mine');
    const error = await rejection(fetchDirectory(url, repo.commits[2] as string, 'skills/a', dest));
    expect(error).toMatchObject({ code: 'GIT_DESTINATION_EXISTS', dest });
    expect(await readdir(dest)).toEqual(['mine.txt']);
    expect(server.stats.requests).toBe(0);
  });

  it('creates missing parent folders of the destination', async () => {
    const { work, repo, url } = await setup();
    const dest = join(work, 'a', 'b', 'out');
    await fetchDirectory(url, repo.commits[2] as string, 'skills/c', dest);
    expect(await readdir(dest)).toEqual(['SKILL.md']);
  });

  it('works in a private gitdir it removes afterwards, after success and after failure', async () => {
    const { work, repo, url } = await setup();
    const privateDir = join(work, 'private');
    await mkdir(privateDir);
    await fetchDirectory(url, repo.commits[2] as string, 'skills/a', join(work, 'ok'), { privateDir });
    expect(await readdir(privateDir)).toEqual([]);
    await rejection(fetchDirectory(url, repo.commits[2] as string, 'evil', join(work, 'refused'), { privateDir }));
    expect(await readdir(privateDir)).toEqual([]);
    await rejection(
      fetchDirectory(url, '0123456789abcdef0123456789abcdef01234567', 'x', join(work, 'missing'), { privateDir }),
    );
    expect(await readdir(privateDir)).toEqual([]);
  });

  it('directoryTree gives the tree id fetchDirectory gives, and with a shared workDir the fetch is not repeated', async () => {
    const { work, repo, url, server } = await setup();
    const workDir = join(work, 'shared');
    await mkdir(workDir, { mode: 0o700 });
    const tree = await directoryTree(url, repo.commits[2] as string, 'skills/a/', { workDir });
    expect(tree).toEqual({ commit: repo.commits[2], tree: await repo.treeOf(2, 'skills/a'), path: 'skills/a' });
    server.resetStats();
    const result = await fetchDirectory(url, repo.commits[2] as string, 'skills/a', join(work, 'out'), { workDir });
    expect(result.tree).toBe(tree.tree);
    // isomorphic-git fetched the whole commit the first time: the second call reuses it.
    expect(server.stats.requests).toBe(0);
    expect(await readdir(workDir)).toEqual(['git']);
  });

  it('writes a submodule as an empty folder and reports it', async () => {
    const root = await scratch();
    const work = await scratch();
    const repo = await makeRepo({ root, name: 'r.git', commits: [{ files: { 'skills/a/SKILL.md': 'a' } }] });
    const pinned = 'abcdefabcdefabcdefabcdefabcdefabcdefabcd';
    const commit = await commitTree(
      repo,
      [`100644 blob ${await blob(repo, 'a')}\tSKILL.md`, `160000 commit ${pinned}\tvendor`],
      'with-submodule',
    );
    const server = await serve({ root });
    const dest = join(work, 'out');
    const result = await fetchDirectory(server.urlFor('r.git'), commit, '', dest);
    expect(await listTree(dest)).toEqual({ 'SKILL.md': 'file 644 a', vendor: 'dir' });
    expect(result.submodules).toEqual([{ path: 'vendor', commit: pinned }]);
  });

  it.each([
    ['.git', 'a .git entry is never written'],
    ['.GIT', 'a .git entry is never written'],
    ['.git.', 'a .git entry is never written'],
    ['..', 'the entry name is not a plain file name'],
    ['.', 'the entry name is not a plain file name'],
    ['a\\b', 'the entry name is not a plain file name'],
  ])('refuses a crafted tree with an entry named %j', async (name, reason) => {
    const root = await scratch();
    const work = await scratch();
    const repo = await makeRepo({ root, name: 'r.git', commits: [{ files: { 'ok.md': 'ok' } }] });
    const content = await blob(repo, 'payload');
    const tree = await rawTree(repo, [
      ['100644', 'ok.md', content],
      ['100644', name, content],
    ]);
    const commit = await commitOf(repo, tree, 'crafted');
    const server = await serve({ root });
    const dest = join(work, 'out');
    const error = await rejection(fetchDirectory(server.urlFor('r.git'), commit, '', dest));
    expect(error).toMatchObject({ code: 'GIT_UNSAFE_TREE', path: name, reason });
    expect(existsSync(dest)).toBe(false);
  });

  it('refuses a crafted tree that names one entry twice', async () => {
    const root = await scratch();
    const work = await scratch();
    const repo = await makeRepo({ root, name: 'r.git', commits: [{ files: { 'ok.md': 'ok' } }] });
    const content = await blob(repo, 'payload');
    const tree = await rawTree(repo, [
      ['100644', 'twice', content],
      ['100755', 'twice', content],
    ]);
    const commit = await commitOf(repo, tree, 'crafted');
    const server = await serve({ root });
    const error = await rejection(fetchDirectory(server.urlFor('r.git'), commit, '', join(work, 'out')));
    expect(error).toMatchObject({
      code: 'GIT_UNSAFE_TREE',
      path: 'twice',
      reason: 'the name appears twice in its tree',
    });
  });
});

describe('fetchDirectory verifies what the engine hands over', () => {
  /** The real engine, with one object swapped on the way out. */
  function tampering(swap: (oid: string) => string | undefined): GitEngine {
    const real = isomorphicGitEngine();
    return {
      ...real,
      async fetchCommit(request) {
        const reader = await real.fetchCommit(request);
        return { read: (oid) => reader.read(swap(oid) ?? oid) };
      },
    };
  }

  it('refuses a commit object that does not hash to the commit asked for (GIT_COMMIT_MISMATCH)', async () => {
    const { work, repo, url } = await setup();
    const [, , asked] = repo.commits as [string, string, string];
    // The reader hands over the commit's root tree when asked for the commit: real bytes, wrong object.
    const tree = await repo.treeOf(2);
    const engine = tampering((oid) => (oid === asked ? tree : undefined));
    const error = await rejection(fetchDirectory(url, asked, 'skills/a', join(work, 'out'), { engine }));
    expect(error).toMatchObject({ code: 'GIT_COMMIT_MISMATCH', expected: asked });
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it('refuses a blob that does not hash to its id (GIT_CORRUPT_OBJECT) and removes what it wrote', async () => {
    const { work, repo, url } = await setup();
    const guide = (await repo.git('rev-parse', `${repo.commits[2]}:skills/a/docs/guide.md`)).trim();
    const other = (await repo.git('rev-parse', `${repo.commits[2]}:skills/a/SKILL.md`)).trim();
    const engine = tampering((oid) => (oid === guide ? other : undefined));
    const dest = join(work, 'out');
    const error = await rejection(fetchDirectory(url, repo.commits[2] as string, 'skills/a', dest, { engine }));
    expect(error).toMatchObject({ code: 'GIT_CORRUPT_OBJECT', oid: guide });
    expect(existsSync(dest)).toBe(false);
  });
});

describe('what a fetch transfers', () => {
  const BIG = 2 * 1024 * 1024;

  it('never transfers history: a large file that only older commits hold is not sent', async () => {
    const root = await scratch();
    const work = await scratch();
    const repo = await makeRepo({
      root,
      name: 'r.git',
      commits: [
        { files: { 'data/big.bin': randomBytes(BIG), 'skills/a/SKILL.md': 'a' } },
        { remove: ['data'], files: { 'skills/a/SKILL.md': 'a2' } },
      ],
    });
    const server = await serve({ root });
    await fetchDirectory(server.urlFor('r.git'), repo.commits[1] as string, 'skills/a', join(work, 'out'));
    expect(server.stats.bytesServed).toBeLessThan(64 * 1024);
  });

  it('transfers the whole tree of the commit, unrelated folders included (depth 1 has no path filter; documented)', async () => {
    const root = await scratch();
    const work = await scratch();
    const repo = await makeRepo({
      root,
      name: 'r.git',
      commits: [{ files: { 'data/big.bin': randomBytes(BIG), 'skills/a/SKILL.md': 'a' } }],
    });
    const server = await serve({ root });
    const result = await fetchDirectory(
      server.urlFor('r.git'),
      repo.commits[0] as string,
      'skills/a',
      join(work, 'out'),
    );
    expect(result.bytes).toBe(1);
    // Honest about the cost: the unrelated 2 MiB blob came over the wire too.
    expect(server.stats.bytesServed).toBeGreaterThan(BIG);
    expect(server.stats.log.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      'GET /r.git/info/refs',
      'POST /r.git/git-upload-pack',
    ]);
  });
});
