import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';
import { expectedFiles, keyOf, slowFill } from './support/content.js';
import { storeState, visibleProblems } from './support/inspect.js';
import { printed, spawnWorker } from './support/spawn-worker.js';
import { tempDir } from './support/temp.js';

const TRIALS = 100;
const LANES = 4;

/** Checks what must hold after any crash, and that the store still works. */
async function checkAfterCrash(root: string, trial: number, checked: Set<string>): Promise<void> {
  const where = `trial ${trial}`;
  expect(visibleProblems(root), where).toEqual([]);
  const store = await openContentStore({ root, lock: { staleMs: 2000 } });
  const report = await store.verify();
  expect(report.corrupt, where).toEqual([]);
  // Every visible object holds exactly the files its content id stands for (verify above
  // re-hashed the older ones against their markers already).
  for (const marker of (await store.list()).objects) {
    if (checked.has(marker.objectId)) continue;
    checked.add(marker.objectId);
    for (const [path, text] of expectedFiles(marker.contentId)) {
      expect(await readFile(join(root, 'objects', marker.objectId, 'content', path), 'utf8'), `${where} ${path}`).toBe(
        text,
      );
    }
  }
  const contentId = `after-${trial}`;
  const tree = await store.acquire(keyOf(contentId, trial % 3), slowFill(contentId));
  expect(await readFile(join(tree.linkPath, 'SKILL.md'), 'utf8'), where).toBe(expectedFiles(contentId).get('SKILL.md'));
}

describe('crash safety', () => {
  it(`survives ${TRIALS} writers killed with SIGKILL at random points`, async () => {
    let seed = 20261130;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    let killedMidway = 0;
    const lane = async (laneIndex: number) => {
      const root = join(await tempDir(), 'store');
      const checked = new Set<string>();
      for (let t = laneIndex; t < TRIALS; t += LANES) {
        const child = spawnWorker([root, 'loop', String(t + 1)]);
        const exited = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
        await printed(child, 'ready');
        // Every other writer is let finish one acquisition first, however slow the machine:
        // the trials must exercise real publications, not only kills during a first fill
        // (on a loaded machine a writer could take longer than 250 ms over its first one).
        if (t % 2 === 1) await printed(child, 'acquired');
        // A random moment within the next few acquisitions: filling, sealing, renaming,
        // writing the key record, replacing the link, sweeping or collecting.
        await new Promise((resolve) => setTimeout(resolve, random(250)));
        child.kill('SIGKILL');
        if ((await exited) === 'SIGKILL') killedMidway += 1;
        await checkAfterCrash(root, t, checked);
      }
      return storeState(root);
    };
    const states = await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)));
    expect(killedMidway).toBe(TRIALS);
    // The writers did publish between kills: the trials exercised real acquisitions.
    for (const state of states) expect(state.objects.length).toBeGreaterThan(TRIALS / LANES);
  }, 600_000);
});
