import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderings, startLinkSwapper, tempDir, writeOutsideSecret } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotInsideError, openInside, readFileInside } from '@agentproto/fs-inside';
import { hashTree } from '../../src/index.js';

/**
 * The store hashes trees that someone else may be changing (a local skill folder, a
 * staged tree): a process exchanges a folder of the tree with a link to a folder outside
 * it, in a tight loop. The outside folder holds the same names and one of its own, each
 * a canary of a size no tree file has.
 */
describe('a tree whose folders are swapped for links while it is hashed or read', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('cache-race-');
  });
  afterAll(() => dir.cleanup());

  it('hashes only the tree as it is inside (a swapped folder counts as the link it is), never an outside file, and reads nothing outside through openInside', async () => {
    const root = join(dir.path, 'tree');
    const outside = await writeOutsideSecret(join(dir.path, 'outside'), ['a.txt', 'deep/b.txt']);
    await mkdir(join(root, 'lib/deep'), { recursive: true });
    await writeFile(join(root, 'lib/a.txt'), 'inside a\n');
    await writeFile(join(root, 'lib/deep/b.txt'), 'inside b\n');
    await mkdir(join(root, '.park'));
    await symlink(outside.dir, join(root, '.park/lib'));
    const honest = (await hashTree(root)).digest;
    // A walk is no snapshot: each folder is listed when the walk reaches it, so each of the
    // two names may be seen as the folder or as the link. Any of those four trees is fine;
    // a tree with an outside file in it never is.
    const states = new Set<string>();
    for (const [n, [libIsFolder, parkIsFolder]] of [
      [true, false],
      [false, true],
      [true, true],
      [false, false],
    ].entries()) {
      const state = join(dir.path, `state-${n}`);
      await mkdir(join(state, '.park'), { recursive: true });
      for (const [place, isFolder] of [
        ['lib', libIsFolder],
        ['.park/lib', parkIsFolder],
      ] as const) {
        if (!isFolder) {
          await symlink(outside.dir, join(state, place));
          continue;
        }
        await mkdir(join(state, place, 'deep'), { recursive: true });
        await writeFile(join(state, place, 'a.txt'), 'inside a\n');
        await writeFile(join(state, place, 'deep/b.txt'), 'inside b\n');
      }
      states.add((await hashTree(state)).digest);
    }
    expect(states.has(honest)).toBe(true);

    const leaks: string[] = [];
    let hashed = 0;
    let reads = 0;
    const swapper = await startLinkSwapper(join(root, 'lib'), join(root, '.park/lib'));
    const started = performance.now();
    try {
      while (performance.now() - started < 3_000) {
        try {
          const { digest } = await hashTree(root);
          hashed += 1;
          if (!states.has(digest)) leaks.push(`digest ${digest} of a tree that never was`);
        } catch (error) {
          if (!(error instanceof NotInsideError)) leaks.push(`untyped: ${String(error)}`);
          for (const text of renderings(error))
            if (outside.leaksIn(text).length > 0) leaks.push(`error: ${outside.leaksIn(text).join(', ')}`);
        }
        for (const rel of ['lib/a.txt', 'lib/deep/b.txt']) {
          try {
            const { bytes, stats } = readFileInside(root, rel);
            reads += 1;
            if (outside.leaksIn(bytes).length > 0 || stats.size === outside.size)
              leaks.push(`read ${rel}: outside content`);
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (!(error instanceof NotInsideError) && code !== 'ENOENT') leaks.push(`untyped: ${String(error)}`);
            for (const text of renderings(error))
              if (outside.leaksIn(text).length > 0) leaks.push(`error: ${outside.leaksIn(text).join(', ')}`);
          }
        }
        try {
          const { fd, stats } = openInside(root, 'lib/deep');
          (await import('node:fs')).closeSync(fd);
          if (stats.isFile()) leaks.push('a folder opened as a file');
        } catch (error) {
          for (const text of renderings(error))
            if (outside.leaksIn(text).length > 0) leaks.push(`error: ${outside.leaksIn(text).join(', ')}`);
        }
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(100);
    }
    expect(leaks.slice(0, 5)).toEqual([]);
    expect(hashed).toBeGreaterThan(5);
    expect(reads).toBeGreaterThan(5);
  });
});
