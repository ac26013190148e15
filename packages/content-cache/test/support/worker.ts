/**
 * A separate process acquiring into a store, for the crash and concurrency tests.
 *   worker.ts <root> loop <seed>            acquire forever (until killed); prints "ready", then
 *                                           "acquired" after each acquisition
 *   worker.ts <root> batch <seed> <count> <startAt>
 *                                           `count` acquisitions over 5 keys, starting at the
 *                                           epoch millisecond `startAt`; prints the object ids
 */
import { openContentStore } from '@agentproto/content-cache';
import { keyOf, slowFill } from './content.js';

const [root, mode, seedText, countText, startAtText] = process.argv.slice(2);
let seed = Number(seedText) >>> 0 || 1;
const random = (n: number) => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed % n;
};

const store = await openContentStore({ root: root!, lock: { staleMs: 2000 } });

if (mode === 'loop') {
  process.stdout.write('ready\n');
  for (let i = 0; ; i++) {
    // Mostly new content (a miss that fills and publishes), sometimes a repeat (a hit or an
    // adoption), now and then a gc, across a few declarations whose links keep moving.
    const contentId = random(4) === 0 ? `shared-${random(3)}` : `c-${seedText}-${i}`;
    await store.acquire(keyOf(contentId, random(3)), slowFill(contentId));
    process.stdout.write('acquired\n');
    if (random(10) === 0) await store.gc();
  }
} else {
  const count = Number(countText);
  const wait = Number(startAtText) - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const ids: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const k = random(5);
    const tree = await store.acquire(keyOf(`k${k}`, k), slowFill(`k${k}`, random(3)));
    ids[`k${k}`] = tree.objectId;
  }
  process.stdout.write(`${JSON.stringify(ids)}\n`);
}
