import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  generateTree,
  makeRepo,
  parseLsRemote,
  tempDir,
  writeTree,
  type RepoSpec,
  type TempDir,
} from '@agentproto/testkit';
import { git } from './support.js';

let dir: TempDir;

beforeEach(async () => {
  dir = await tempDir('testkit-repo-');
});

afterEach(async () => {
  await dir.cleanup();
});

/** `git ls-tree -r` of a commit as path → `mode type`. */
async function lsTree(gitDir: string, commit: string): Promise<Record<string, string>> {
  // -z: paths verbatim, not C-quoted (non-ASCII names would be).
  const { stdout } = await git(['--git-dir', gitDir, 'ls-tree', '-r', '-z', commit]);
  const entries: Record<string, string> = {};
  for (const line of stdout.split('\0')) {
    const [meta, path] = line.split('\t');
    const [mode, type] = (meta ?? '').split(' ');
    if (path) entries[path] = `${mode} ${type}`;
  }
  return entries;
}

async function show(gitDir: string, object: string): Promise<string> {
  return (await git(['--git-dir', gitDir, 'cat-file', '-p', object])).stdout;
}

describe('makeRepo', () => {
  it('makes a bare repository whose HEAD is main, with the given files and messages', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'skills.git',
      commits: [{ message: 'first', files: { 'skills/a/SKILL.md': '---\nname: a\n---\n' } }],
    });

    expect(repo.path).toBe(join(dir.path, 'skills.git'));
    expect((await git(['--git-dir', repo.path, 'rev-parse', '--is-bare-repository'])).stdout.trim()).toBe('true');
    expect((await git(['--git-dir', repo.path, 'symbolic-ref', 'HEAD'])).stdout.trim()).toBe('refs/heads/main');
    expect(repo.commits).toHaveLength(1);
    expect(repo.head()).toBe(repo.commits[0]);
    expect(await show(repo.path, `${repo.commits[0]}:skills/a/SKILL.md`)).toBe('---\nname: a\n---\n');
    expect((await git(['--git-dir', repo.path, 'log', '-1', '--format=%s|%an|%ae|%at'])).stdout.trim()).toBe(
      'first|Testkit|testkit@example.com|1700000000',
    );
  });

  it('is deterministic: the same spec gives the same SHAs', async () => {
    const spec = (name: string): RepoSpec => ({
      root: dir.path,
      name,
      commits: [{ files: { a: 'a' } }, { branch: 'dev', files: { b: Buffer.from([0, 1, 2]) } }],
      tags: [{ name: 'v1', target: 0, annotated: true, message: 'one' }],
    });

    const one = await makeRepo(spec('one.git'));
    const two = await makeRepo(spec('two.git'));

    expect(two.commits).toEqual(one.commits);
    expect(await two.refs()).toEqual(await one.refs());
  });

  it('starts each commit from its branch tip: files not mentioned stay, removed files and folders go', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'r.git',
      commits: [
        { files: { 'skills/a/SKILL.md': 'a', 'skills/a/extra.md': 'x', 'skills/b/SKILL.md': 'b', 'README.md': 'r' } },
        { files: { 'skills/c/SKILL.md': 'c' }, remove: ['skills/a', 'README.md'] },
        { files: { 'skills/b/SKILL.md': 'b2' } },
      ],
    });

    expect(Object.keys(await lsTree(repo.path, repo.commits[2]!)).sort()).toEqual([
      'skills/b/SKILL.md',
      'skills/c/SKILL.md',
    ]);
    expect(await show(repo.path, `${repo.commits[2]}:skills/b/SKILL.md`)).toBe('b2');
    expect((await git(['--git-dir', repo.path, 'rev-list', 'main'])).stdout.trim().split('\n')).toEqual(
      [...repo.commits].reverse(),
    );
  });

  it('puts commits on several branches; a new branch starts from main unless told otherwise', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'r.git',
      commits: [
        { files: { 'a.md': 'a' } },
        { branch: 'feature', files: { 'f.md': 'f' } },
        { files: { 'b.md': 'b' } },
        { branch: 'orphan', from: null, files: { 'o.md': 'o' } },
        { branch: 'hotfix', from: 0, files: { 'h.md': 'h' } },
        { branch: 'merged', from: 'main', merge: ['feature'], files: { 'f.md': 'f' } },
      ],
    });

    expect(Object.keys(await lsTree(repo.path, repo.head('feature'))).sort()).toEqual(['a.md', 'f.md']);
    expect(Object.keys(await lsTree(repo.path, repo.head('main'))).sort()).toEqual(['a.md', 'b.md']);
    expect(Object.keys(await lsTree(repo.path, repo.head('orphan')))).toEqual(['o.md']);
    expect(Object.keys(await lsTree(repo.path, repo.head('hotfix'))).sort()).toEqual(['a.md', 'h.md']);
    const parents = (await git(['--git-dir', repo.path, 'rev-list', '--parents', '-1', repo.head('merged')])).stdout
      .trim()
      .split(' ');
    expect(parents.slice(1)).toEqual([repo.commits[2], repo.commits[1]]);
    expect((await git(['--git-dir', repo.path, 'rev-list', '--max-parents=0', 'orphan'])).stdout.trim()).toBe(
      repo.head('orphan'),
    );
  });

  it('makes a branch and a tag with the same name, both visible to clients', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'r.git',
      commits: [{ files: { 'a.md': '1' } }, { files: { 'a.md': '2' } }],
      branches: [{ name: 'x', from: 1 }],
      tags: [{ name: 'x', target: 0 }],
    });

    const refs = await repo.refs();
    expect(refs['refs/heads/x']).toBe(repo.commits[1]);
    expect(refs['refs/tags/x']).toBe(repo.commits[0]);
    expect(refs.HEAD).toBe(repo.commits[1]);
  });

  it('makes annotated tags that peel to their commit (ls-remote shows ^{}) and lightweight tags that do not', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'r.git',
      commits: [{ files: { 'a.md': '1' } }],
      tags: [
        { name: 'v1', target: 'main', annotated: true, message: 'release 1' },
        { name: 'light', target: 0 },
      ],
    });

    const refs = parseLsRemote((await git(['ls-remote', repo.path])).stdout);
    expect(refs['refs/tags/v1']).not.toBe(repo.commits[0]);
    expect(refs['refs/tags/v1^{}']).toBe(repo.commits[0]);
    expect(refs['refs/tags/light']).toBe(repo.commits[0]);
    expect(refs['refs/tags/light^{}']).toBeUndefined();
    expect(await show(repo.path, 'v1')).toContain('release 1');
    expect(await repo.refs()).toEqual(refs);
  });

  it('keeps symlinks (pointing inside or outside the repository) and the executable bit in the tree', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'r.git',
      commits: [
        {
          files: {
            'skills/a/SKILL.md': 'a',
            'skills/a/link': { symlink: '../a/SKILL.md' },
            'skills/a/escape': { symlink: '../../../etc/passwd' },
            'bin/run.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
            'bin/tool': { content: 'x', executable: true },
            'bin/plain': { content: 'x', mode: 0o644 },
          },
        },
      ],
    });

    expect(await lsTree(repo.path, repo.head())).toEqual({
      'bin/plain': '100644 blob',
      'bin/run.sh': '100755 blob',
      'bin/tool': '100755 blob',
      'skills/a/SKILL.md': '100644 blob',
      'skills/a/escape': '120000 blob',
      'skills/a/link': '120000 blob',
    });
    expect(await show(repo.path, 'main:skills/a/escape')).toBe('../../../etc/passwd');

    const checkout = join(dir.path, 'checkout');
    await git(['clone', '-q', repo.path, checkout]);
    expect(await readlink(join(checkout, 'skills/a/link'))).toBe('../a/SKILL.md');
    expect((await stat(join(checkout, 'bin/run.sh'))).mode & 0o111).not.toBe(0);
  });

  it('treeOf gives the tree id of a folder at a commit, unchanged while the folder is', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'r.git',
      commits: [
        { files: { 'skills/a/SKILL.md': 'a', 'skills/b/SKILL.md': 'b' } },
        { files: { 'skills/b/SKILL.md': 'b2' } },
      ],
    });

    const a0 = await repo.treeOf(0, 'skills/a');
    expect(a0).toBe((await git(['--git-dir', repo.path, 'rev-parse', `${repo.commits[0]}:skills/a`])).stdout.trim());
    expect(await repo.treeOf(1, 'skills/a')).toBe(a0);
    expect(await repo.treeOf('main', 'skills/b')).not.toBe(await repo.treeOf(0, 'skills/b'));
    expect(await repo.treeOf(repo.commits[1]!)).toBe(
      (await git(['--git-dir', repo.path, 'rev-parse', 'main^{tree}'])).stdout.trim(),
    );
  });

  it('points HEAD at the requested branch', async () => {
    const repo = await makeRepo({
      root: dir.path,
      name: 'r.git',
      head: 'trunk',
      commits: [{ branch: 'trunk', files: { a: 'a' } }],
    });

    expect((await git(['--git-dir', repo.path, 'symbolic-ref', 'HEAD'])).stdout.trim()).toBe('refs/heads/trunk');
    expect(repo.head()).toBe(repo.commits[0]);
  });

  it('rejects paths that escape or are not plain relative paths, and unknown refs, leaving nothing behind', async () => {
    for (const path of ['/abs', '../up', 'a/../b', 'a//b', '.git/config', 'a/']) {
      await expect(
        makeRepo({ root: dir.path, name: 'bad.git', commits: [{ files: { [path]: 'x' } }] }),
      ).rejects.toThrow(/invalid path/);
    }
    await expect(
      makeRepo({
        root: dir.path,
        name: 'bad.git',
        commits: [{ files: { a: 'a' } }],
        tags: [{ name: 't', target: 'nope' }],
      }),
    ).rejects.toThrow(/unknown commit ref/);
    // A failed spec leaves no half-made repository behind.
    expect(await readdir(dir.path)).toEqual([]);
  });

  it('writes packs that git fsck and verify-pack accept, for odd names and large trees', async () => {
    const tree = generateTree({ files: 1500, minBytes: 0, maxBytes: 3000, seed: 9 });
    const repo = await makeRepo({
      root: dir.path,
      name: 'nested/org/r.git',
      commits: [
        {
          files: { ...tree, 'with space.md': 'text '.repeat(1000), '"quoted".md': 'q', 'ünïcode/ß.md': 'u', empty: '' },
        },
        { files: { 'with space.md': 'changed' }, remove: ['"quoted".md'] },
      ],
    });

    await git(['--git-dir', repo.path, 'fsck', '--full', '--strict']);
    const packs = (await readdir(join(repo.path, 'objects/pack'))).filter((name) => name.endsWith('.idx'));
    for (const idx of packs) await git(['--git-dir', repo.path, 'verify-pack', join(repo.path, 'objects/pack', idx)]);
    const files = await lsTree(repo.path, repo.head());
    expect(Object.keys(files)).toHaveLength(1503);
    expect(files['ünïcode/ß.md']).toBe('100644 blob');
    const sample = Object.keys(tree)[123]!;
    expect((await git(['--git-dir', repo.path, 'cat-file', '-s', `main:${sample}`])).stdout.trim()).toBe(
      String(tree[sample]!.length),
    );
    expect(files['"quoted".md']).toBeUndefined();
    expect(await show(repo.path, 'main:with space.md')).toBe('changed');
  });

  it('commits a generated 10,000-file tree (1–64 KiB each) in under 10 seconds', async () => {
    const tree = generateTree({ files: 10_000, minBytes: 1024, maxBytes: 65536, seed: 42 });

    const started = performance.now();
    const repo = await makeRepo({ root: dir.path, name: 'big.git', commits: [{ files: tree }] });
    const seconds = (performance.now() - started) / 1000;

    console.log(`makeRepo: 10,000 files, ${sumBytes(tree) >> 20} MiB in ${seconds.toFixed(2)} s`);
    expect(seconds).toBeLessThan(10);
    const count = (await git(['--git-dir', repo.path, 'ls-tree', '-r', '--name-only', 'main'])).stdout
      .trim()
      .split('\n').length;
    expect(count).toBe(10_000);
  });
});

describe('generateTree', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const a = generateTree({ files: 200, seed: 5 });
    const b = generateTree({ files: 200, seed: 5 });
    const c = generateTree({ files: 200, seed: 6 });

    expect(Object.keys(a)).toEqual(Object.keys(b));
    for (const path of Object.keys(a)) expect(a[path]!.equals(b[path]!)).toBe(true);
    expect(Object.keys(c)).not.toEqual(Object.keys(a));
  });

  it('makes the requested number of files, nested two folders deep, sized within bounds', () => {
    const tree = generateTree({ files: 500, minBytes: 10, maxBytes: 20, seed: 1 });

    const paths = Object.keys(tree);
    expect(paths).toHaveLength(500);
    for (const path of paths) expect(path).toMatch(/^d\d\d\/d\d\d\/f\d{5}\.bin$/);
    for (const content of Object.values(tree)) expect(content.length).toBeGreaterThanOrEqual(10);
    for (const content of Object.values(tree)) expect(content.length).toBeLessThanOrEqual(20);
    expect(generateTree({ files: 2, prefix: 'skills/big/' }).constructor).toBe(Object);
    expect(Object.keys(generateTree({ files: 2, prefix: 'skills/big' }))[0]).toMatch(
      /^skills\/big\/d\d\d\/d\d\d\/f00000\.bin$/,
    );
  });

  it('writeTree writes files, modes and symlinks to a folder', async () => {
    await writeTree(dir.path, {
      ...generateTree({ files: 20, minBytes: 1, maxBytes: 8 }),
      'x/run.sh': { content: 'echo', mode: 0o755 },
      'x/link': { symlink: 'run.sh' },
    });

    expect(await readFile(join(dir.path, 'x/run.sh'), 'utf8')).toBe('echo');
    expect((await stat(join(dir.path, 'x/run.sh'))).mode & 0o111).not.toBe(0);
    expect(await readlink(join(dir.path, 'x/link'))).toBe('run.sh');
    expect((await readdir(dir.path)).filter((name) => name.startsWith('d'))).not.toHaveLength(0);
  });
});

function sumBytes(tree: Record<string, Buffer>): number {
  return Object.values(tree).reduce((sum, content) => sum + content.length, 0);
}
