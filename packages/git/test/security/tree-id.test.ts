import { execFile } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { folderTreeId } from '../../src/index.js';
import { type GitTreeNode, gitBlobId, gitTreeId, gitTreeIdOf } from '../../src/tree-id.js';
import { scratch } from '../support/fixtures.js';

const run = promisify(execFile);
/** git with no configuration but ours: file modes and links as git stores them on Linux. */
const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/nonexistent' };

async function gitWriteTree(folder: string, gitdir: string): Promise<string> {
  const git = (...args: string[]) =>
    run(
      'git',
      [`--git-dir=${gitdir}`, `--work-tree=${folder}`, '-c', 'core.fileMode=true', '-c', 'core.symlinks=true', ...args],
      { env: gitEnv },
    );
  await run('git', ['init', '-q', '--bare', gitdir], { env: gitEnv });
  await git('add', '-A', '.');
  return (await git('write-tree')).stdout.trim();
}

type Directory = Extract<GitTreeNode, { kind: 'directory' }>;

async function writeTree(folder: string, node: Directory): Promise<void> {
  await mkdir(folder, { recursive: true });
  for (const [name, child] of node.entries as ReadonlyMap<string, GitTreeNode>) {
    const path = join(folder, name);
    if (child.kind === 'directory') await writeTree(path, child);
    else if (child.kind === 'symlink') await symlink(child.target as string, path);
    else await writeFile(path, child.data, { mode: child.executable ? 0o755 : 0o644 });
  }
}

// Names from a small alphabet, so that `a`, `a.b`, `a-b`, `a0` and a folder `a` meet often:
// git's order puts a folder's name as if it ended with `/`. Never `.`, `..` or `.git`,
// which git does not add.
const name = fc
  .oneof(
    fc.constantFrom('a', 'a-', 'a.', 'a.b', 'a0', 'a_', 'b', 'B', 'é'),
    fc
      .array(fc.constantFrom('a', 'b', 'B', '-', '.', '_', '0', '~', 'é'), { minLength: 1, maxLength: 3 })
      .map((chars) => chars.join('')),
  )
  .filter((n) => n !== '.' && n !== '..' && !/^\.git/i.test(n));
const leaf: fc.Arbitrary<GitTreeNode> = fc.oneof(
  fc.record({ kind: fc.constant('file' as const), data: fc.uint8Array({ maxLength: 64 }), executable: fc.boolean() }),
  fc.record({
    kind: fc.constant('symlink' as const),
    target: fc.string({ minLength: 1, maxLength: 12 }).filter((t) => !t.includes('\0')),
  }),
);
// git stores no empty folder, so every generated folder holds something.
const tree = fc.letrec<{ dir: Directory; node: GitTreeNode }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, leaf, tie('dir')),
  dir: fc
    .uniqueArray(fc.tuple(name, tie('node')), { minLength: 1, maxLength: 5, selector: ([n]) => n })
    .map((pairs): Directory => ({ kind: 'directory', entries: new Map(pairs) })),
})).dir;

describe('git tree ids computed from content alone', () => {
  it('equal what git write-tree computes for the same files, links, modes and folders', async () => {
    const base = await scratch();
    let round = 0;
    await fc.assert(
      fc.asyncProperty(tree, async (model) => {
        round += 1;
        const folder = join(base, `t${round}`);
        await writeTree(folder, model);
        const expected = await gitWriteTree(folder, join(base, `g${round}`));
        expect(gitTreeIdOf(model)).toBe(expected);
        expect(await folderTreeId(folder)).toBe(expected);
      }),
      { numRuns: 20 },
    );
  });

  it('change with any byte, mode, name or extra empty folder, so a substituted tree never passes', async () => {
    const base = await scratch();
    const folder = join(base, 'tree');
    await writeTree(folder, {
      kind: 'directory',
      entries: new Map<string, GitTreeNode>([
        ['SKILL.md', { kind: 'file', data: Buffer.from('# x\n') }],
        ['run.sh', { kind: 'file', data: Buffer.from('#!/bin/sh\n'), executable: true }],
      ]),
    });
    const original = await gitWriteTree(folder, join(base, 'g'));
    expect(await folderTreeId(folder)).toBe(original);
    await mkdir(join(folder, 'extra'));
    // The empty tree: git itself never writes it, a crafted repository can.
    expect(await folderTreeId(folder)).toBe(
      gitTreeId([
        { name: 'SKILL.md', mode: '100644', oid: gitBlobId(Buffer.from('# x\n')) },
        { name: 'extra', mode: '40000', oid: '4b825dc642cb6eb9a060e54bf8d69288fbee4904' },
        { name: 'run.sh', mode: '100755', oid: gitBlobId(Buffer.from('#!/bin/sh\n')) },
      ]),
    );
    expect(await folderTreeId(folder)).not.toBe(original);
  });

  it('refuses a tree that names one entry twice', () => {
    const oid = gitBlobId(Buffer.from(''));
    expect(() =>
      gitTreeId([
        { name: 'a', mode: '100644', oid },
        { name: 'a', mode: '100755', oid },
      ]),
    ).toThrow(/appears twice/);
  });
});
