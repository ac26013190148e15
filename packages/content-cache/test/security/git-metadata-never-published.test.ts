import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { copyInside } from '@agentproto/fs-inside';
import { tempDir } from '@agentproto/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { hashTree, openContentStore, UnsafeTreeError, type Fill } from '../../src/index.js';

/**
 * Any provider fills the store (git, a connector, a host's own): whatever it wrote, a tree
 * holding a `.git` in a spelling git refuses is never published, since `git status` in a
 * published folder would run that repository's core.fsmonitor.
 */
const DOT_GIT_SPELLINGS = [
  '.git',
  '.GIT',
  'git~1',
  'GIT~1',
  '.git.',
  '.git ',
  '.git::$INDEX_ALLOCATION',
  '.g\u200cit',
  '\ufeff.git',
];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function newStore() {
  const dir = await tempDir('cache-dotgit-');
  cleanups.push(() => dir.cleanup());
  const root = join(dir.path, 'store');
  return { store: await openContentStore({ root }), root, dir: dir.path };
}

/** What the store holds besides its own bookkeeping: every list must stay empty after a refusal. */
async function leftovers(root: string) {
  const list = async (name: string) =>
    (await readdir(join(root, name)).catch(() => [] as string[])).filter((entry) => !entry.endsWith('.lock'));
  return { objects: await list('objects'), links: await list('links'), staging: await list('staging') };
}

let n = 0;
function key() {
  n += 1;
  return { provider: 'custom', declaration: { n }, version: `v${n}`, contentId: `c${n}` };
}

async function refusal(run: Promise<unknown>): Promise<UnsafeTreeError> {
  const error = await run.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(UnsafeTreeError);
  return error as UnsafeTreeError;
}

describe('sealing never publishes git metadata', () => {
  it.each(DOT_GIT_SPELLINGS)(
    'refuses a tree holding %j (as a folder, or a file the writer made) with CACHE_UNSAFE_TREE naming the path; nothing is published and no staging is left',
    async (name) => {
      const { store, root } = await newStore();
      const fills: Array<[string, Fill]> = [
        [
          `skill/${name}`,
          async (destination) => {
            await mkdir(join(destination, 'skill', name), { recursive: true });
            await writeFile(join(destination, 'skill', 'SKILL.md'), '---\nname: s\n---\n');
            await writeFile(join(destination, 'skill', name, 'config'), '[core]\n\tfsmonitor = touch /tmp/pwned\n');
          },
        ],
        [`${name}`, async (_destination, ctx) => ctx.writeFile(name, 'gitdir: /somewhere/else\n')],
      ];
      for (const [path, fill] of fills) {
        const error = await refusal(store.acquire(key(), fill));
        expect(error).toMatchObject({ code: 'CACHE_UNSAFE_TREE', reason: 'git-dir', path });
        expect(error.message).toContain(JSON.stringify(path));
        expect(await leftovers(root)).toEqual({ objects: [], links: [], staging: [] });
      }
    },
  );

  it('refuses a .gitmodules that is a link, and a link that leads through a .git entry', async () => {
    const { store, root } = await newStore();
    const cases: Array<[string, string, string, string]> = [
      ['.gitmodules', 'modules.txt', 'gitmodules-link', '.gitmodules'],
      ['.GITMODULES', 'modules.txt', 'gitmodules-link', '.GITMODULES'],
      ['gitmod~1', 'modules.txt', 'gitmodules-link', 'gitmod~1'],
      ['hook', 'sub/.git/hooks/post-checkout', 'git-dir', 'hook'],
      ['cfg', 'git~1/config', 'git-dir', 'cfg'],
    ];
    for (const [link, target, reason, path] of cases) {
      const error = await refusal(
        store.acquire(key(), async (destination) => {
          await mkdir(join(destination, 'sub'), { recursive: true });
          await writeFile(join(destination, 'modules.txt'), '[submodule "x"]\n');
          await symlink(target, join(destination, link));
        }),
      );
      expect(error, link).toMatchObject({ code: 'CACHE_UNSAFE_TREE', reason, path });
      expect(await leftovers(root)).toEqual({ objects: [], links: [], staging: [] });
    }
  });

  it('publishes names that only look like .git (.github, .gitignore, a plain .gitmodules file, git~2)', async () => {
    const { store } = await newStore();
    const names = ['.github', '.gitignore', '.gitmodules', 'git~2', '.git~1', 'x.git', '.gitx'];
    const tree = await store.acquire(key(), async (_destination, ctx) => {
      for (const name of names) await ctx.writeFile(`${name}/f`, name);
    });
    expect((await readdir(tree.path)).sort()).toEqual([...names].sort());
    expect(tree.files).toBe(names.length);
  });

  it('hashTree refuses a .git entry, or leaves it out with skipDotGit exactly as copyInside does, so the copy hashes to the source digest', async () => {
    const temp = await tempDir('cache-dotgit-hash-');
    cleanups.push(() => temp.cleanup());
    const dir = temp.path;
    const source = join(dir, 'checkout');
    await mkdir(join(source, '.git', 'hooks'), { recursive: true });
    await mkdir(join(source, 'docs', 'GIT~1'), { recursive: true });
    await writeFile(join(source, '.git', 'config'), '[core]\n\tfsmonitor = touch /tmp/pwned\n');
    await writeFile(join(source, 'docs', 'GIT~1', 'config'), '[core]\n');
    await writeFile(join(source, 'SKILL.md'), '---\nname: s\n---\n');
    await writeFile(join(source, 'docs', 'a.md'), 'a\n');

    const error = await refusal(hashTree(source));
    expect(error.reason).toBe('git-dir');

    const skipped = await hashTree(source, undefined, { skipDotGit: true });
    const copy = join(dir, 'copy');
    await copyInside(source, '', copy, { skipDotGit: true });
    expect((await readdir(copy)).sort()).toEqual(['SKILL.md', 'docs']);
    expect(await readdir(join(copy, 'docs'))).toEqual(['a.md']);
    expect(await readFile(join(copy, 'SKILL.md'), 'utf8')).toBe('---\nname: s\n---\n');
    expect(await hashTree(copy)).toEqual(skipped);
    expect(skipped.files).toBe(2);

    // A store publishes the copy.
    const { store } = await newStore();
    const tree = await store.acquire(key(), (destination) => copyInside(source, '', destination, { skipDotGit: true }));
    expect(tree.files).toBe(2);
  });
});
