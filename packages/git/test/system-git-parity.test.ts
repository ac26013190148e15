import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '@agentproto/testkit';
import { fetchDirectory, systemGitEngine, type GitEngine } from '../src/index.js';
import { blob, commitOf, commitTree, rawTree } from './support/crafted.js';
import { listTree, rejection, scratch, serve } from './support/fixtures.js';

/** The same checks as with the default engine: every guarantee lives above the engine. */
async function setup() {
  const root = await scratch();
  const work = await scratch();
  const repo = await makeRepo({
    root,
    name: 'skills.git',
    commits: [
      {
        files: {
          'skills/a/SKILL.md': 'a',
          'skills/a/docs/guide.md': 'guide',
          'skills/a/docs/up': { symlink: '../SKILL.md' },
          'skills/b/sibling': { symlink: '../a/SKILL.md' },
          'evil/passwd': { symlink: '../../../etc/passwd' },
          'README.md': 'readme',
        },
      },
    ],
    tags: [{ name: 'v1', target: 0, annotated: true }],
  });
  const server = await serve({ root });
  return { root, work, repo, server, url: server.urlFor('skills.git'), engine: systemGitEngine() };
}

describe('fetchDirectory with the system-git engine keeps every check', () => {
  it.each([
    ['skills/b', 'sibling', '../a/SKILL.md'],
    ['evil', 'passwd', '../../../etc/passwd'],
  ])('refuses %j, whose link %s leads outside, and writes nothing', async (path, link, target) => {
    const { work, repo, url, engine } = await setup();
    const dest = join(work, 'out');
    const error = await rejection(fetchDirectory(url, repo.commits[0] as string, path, dest, { engine }));
    expect(error).toMatchObject({ code: 'GIT_UNSAFE_TREE', path: link, target });
    expect(existsSync(dest)).toBe(false);
  });

  it('refuses the id of an annotated tag object', async () => {
    const { work, repo, url, engine } = await setup();
    const tagObject = (await repo.refs())['refs/tags/v1'] as string;
    const error = await rejection(fetchDirectory(url, tagObject, 'skills/a', join(work, 'out'), { engine }));
    expect(error).toMatchObject({ code: 'GIT_NOT_A_COMMIT', oid: tagObject, type: 'tag' });
  });

  it('reports a commit the server does not have as GIT_COMMIT_UNAVAILABLE', async () => {
    const { work, url, engine } = await setup();
    const missing = '0123456789abcdef0123456789abcdef01234567';
    await expect(fetchDirectory(url, missing, 'skills/a', join(work, 'out'), { engine })).rejects.toMatchObject({
      code: 'GIT_COMMIT_UNAVAILABLE',
      commit: missing,
      url,
    });
  });

  it('refuses a crafted tree with a .git entry, and writes a submodule as an empty folder', async () => {
    const { work, repo, url, engine } = await setup();
    const content = await blob(repo, 'payload');
    const evil = await commitOf(
      repo,
      await rawTree(repo, [
        ['100644', 'ok.md', content],
        ['100644', '.GIT', content],
      ]),
      'crafted',
    );
    const dest = join(work, 'evil');
    await expect(fetchDirectory(url, evil, '', dest, { engine })).rejects.toMatchObject({
      code: 'GIT_UNSAFE_TREE',
      path: '.GIT',
    });
    expect(existsSync(dest)).toBe(false);

    const pinned = 'abcdefabcdefabcdefabcdefabcdefabcdefabcd';
    const withSubmodule = await commitTree(
      repo,
      [`100644 blob ${content}\tSKILL.md`, `160000 commit ${pinned}\tvendor`],
      'with-submodule',
    );
    const out = join(work, 'sub');
    const result = await fetchDirectory(url, withSubmodule, '', out, { engine });
    expect(await listTree(out)).toEqual({ 'SKILL.md': 'file 644 payload', vendor: 'dir' });
    expect(result.submodules).toEqual([{ path: 'vendor', commit: pinned }]);
  });

  it('refuses a blob that does not hash to its id, even when the engine hands it over', async () => {
    const { work, repo, url } = await setup();
    const guide = (await repo.git('rev-parse', `${repo.commits[0]}:skills/a/docs/guide.md`)).trim();
    const other = (await repo.git('rev-parse', `${repo.commits[0]}:skills/a/SKILL.md`)).trim();
    const real = systemGitEngine();
    const engine: GitEngine = {
      ...real,
      async fetchCommit(request) {
        const reader = await real.fetchCommit(request);
        return {
          read: (oid) => reader.read(oid === guide ? other : oid),
          prefetch: (oids, signal) => reader.prefetch?.(oids, signal) ?? Promise.resolve(),
        };
      },
    };
    const dest = join(work, 'out');
    await expect(fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest, { engine })).rejects.toMatchObject({
      code: 'GIT_CORRUPT_OBJECT',
      oid: guide,
    });
    expect(existsSync(dest)).toBe(false);
  });
});
