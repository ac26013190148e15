import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tempDir } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import { openContentStore } from '../../src/index.js';

describe('a fill writes where no one else can', () => {
  it('keeps the staging folder private (0700) while a fill writes and the tree is sealed, and publishes it 0755', async () => {
    const dir = await tempDir('cache-staging-');
    try {
      const store = await openContentStore({ root: join(dir.path, 'store') });
      let modeDuringFill = -1;
      const tree = await store.acquire(
        { provider: 'test', declaration: { n: 1 }, version: 'v1', contentId: 'c1' },
        async (destination, ctx) => {
          // Another local user who could write here could swap a folder of the tree for a link
          // between the fill's (or the seal's) check and its write or read.
          modeDuringFill = (await stat(dirname(destination))).mode & 0o777;
          await ctx.writeFile('a/b.txt', 'b\n');
        },
      );
      expect(modeDuringFill).toBe(0o700);
      expect((await stat(dirname(tree.path))).mode & 0o777).toBe(0o755);
    } finally {
      await dir.cleanup();
    }
  });
});
