import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';
import { expectedFiles, keyOf } from './support/content.js';
import { visibleProblems } from './support/inspect.js';
import { finished, spawnWorker } from './support/spawn-worker.js';
import { tempDir } from './support/temp.js';

describe('concurrency across processes', () => {
  it('4 processes x 25 acquisitions over 5 keys end with exactly 5 objects, and a polling reader never sees a partial tree', async () => {
    const root = join(await tempDir(), 'store');
    const store = await openContentStore({ root, lock: { staleMs: 2000 } });
    const startAt = Date.now() + 2500;
    const children = Array.from({ length: 4 }, (_, i) =>
      spawnWorker([root, 'batch', String(i + 1), '25', String(startAt)]),
    );
    const outputs = Promise.all(children.map(finished));
    let running = true;
    void outputs.finally(() => (running = false)).catch(() => undefined);

    // The reader: every object it can see, through a key or directly, must be whole.
    let treesRead = 0;
    while (running) {
      for (const id of existsSync(join(root, 'objects')) ? await readdir(join(root, 'objects')) : []) {
        const marker = JSON.parse(await readFile(join(root, 'objects', id, 'COMPLETE.json'), 'utf8')) as {
          contentId: string;
        };
        for (const [path, text] of expectedFiles(marker.contentId)) {
          expect(await readFile(join(root, 'objects', id, 'content', path), 'utf8')).toBe(text);
        }
        treesRead += 1;
      }
      for (let k = 0; k < 5; k++) {
        const tree = await store.lookup(keyOf(`k${k}`, k));
        if (tree)
          expect(await readFile(join(tree.linkPath, 'SKILL.md'), 'utf8')).toBe(expectedFiles(`k${k}`).get('SKILL.md'));
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }

    const results = (await outputs).map((out) => JSON.parse(out) as Record<string, string>);
    const objects = await readdir(join(root, 'objects'));
    expect(objects).toHaveLength(5);
    // Every process got the same object for the same key.
    for (let k = 0; k < 5; k++) {
      const ids = new Set(results.map((r) => r[`k${k}`]).filter(Boolean));
      expect(ids.size).toBeLessThanOrEqual(1);
    }
    const report = await store.verify();
    expect(report.ok).toHaveLength(5);
    expect(report.corrupt).toEqual([]);
    expect(visibleProblems(root)).toEqual([]);
    expect(await readdir(join(root, 'staging'))).toEqual([]);
    expect(treesRead).toBeGreaterThan(0);
  }, 120_000);
});
