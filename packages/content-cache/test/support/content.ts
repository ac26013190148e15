import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CacheKey, Fill } from '@agentproto/content-cache';

/** The files a content id stands for: derived from the id, so any reader can check a tree. */
export function expectedFiles(contentId: string, count = 24): Map<string, string> {
  const files = new Map<string, string>();
  for (let i = 0; i < count; i++) files.set(`dir${i % 4}/file${i}.txt`, `${contentId}:${i}:`.repeat(40 + i * 20));
  files.set('SKILL.md', `---\nname: ${contentId}\n---\n`);
  return files;
}

export function keyOf(contentId: string, declaration: number): CacheKey {
  return {
    provider: 'test',
    declaration: { source: 'https://example.test/skills.git', path: `skills/${declaration}` },
    version: `v-${contentId}`,
    contentId,
  };
}

/**
 * Writes the tree of a content id slowly (a turn of the event loop between files) so that a
 * kill or a competing writer lands in the middle of it. Half the files go through the
 * context writer, half through plain calls; one executable script and one inside link.
 */
export function slowFill(contentId: string, pauseMs = 0): Fill {
  return async (destination, ctx) => {
    await mkdir(destination);
    let i = 0;
    for (const [path, text] of expectedFiles(contentId)) {
      if (i++ % 2 === 0) await ctx.writeFile(path, text);
      else {
        await mkdir(join(destination, path, '..'), { recursive: true });
        await writeFile(join(destination, path), text);
      }
      await new Promise((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
    }
    await writeFile(join(destination, 'run.sh'), '#!/bin/sh\necho ok\n', { mode: 0o755 });
    await symlink('SKILL.md', join(destination, 'README.md'));
  };
}
