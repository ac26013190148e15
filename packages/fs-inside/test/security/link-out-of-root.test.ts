import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { renderings, tempDir, writeOutsideSecret } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotInsideError, readFileInside } from '../../src/index.js';

/**
 * A path under a root is read only when the open descriptor is proven inside: a link out of
 * the root is refused, and the error names the path asked for, nothing of what is outside.
 * The race (a folder swapped for a link while it is read) is proven with the store's
 * hashing, in content-cache's tree-race test.
 */
describe('a path that leads out of the root', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('inside-');
  });
  afterAll(() => dir.cleanup());

  it('refuses a link out of the root by the path asked for only', async () => {
    const root = join(dir.path, 'static');
    const outside = await writeOutsideSecret(join(dir.path, 'static-outside'), ['secret.txt']);
    await mkdir(root);
    await symlink(outside.dir, join(root, 'out'));
    const error = (() => {
      try {
        readFileInside(root, 'out/secret.txt');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(NotInsideError);
    expect((error as NotInsideError).reason).toBe('escapes');
    expect((error as NotInsideError).code).toBe('CACHE_NOT_INSIDE');
    expect((error as NotInsideError).message).toBe('"out/secret.txt" leads out of the folder it must stay in');
    for (const text of renderings(error)) expect(outside.leaksIn(text)).toEqual([]);
  });
});
