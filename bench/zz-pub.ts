import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { openContentStore } from '@agentproto/content-cache';
import { syntheticTree, writeAll } from './lib.ts';
const files = syntheticTree(10_000, 1024, 64 * 1024);
for (let r = 0; r < 4; r++) {
  const store = await openContentStore({ root: `/dev/shm/zz-store-${r}` });
  const t0 = performance.now();
  let t1 = 0;
  const c0 = process.cpuUsage();
  await store.acquire({ provider: 'b', declaration: { r }, version: 'v1', contentId: `t-${r}` }, async (_d, ctx) => {
    await writeAll(files, (p, d) => ctx.writeFile(p, d));
    t1 = performance.now();
  });
  const t2 = performance.now();
  const c = process.cpuUsage(c0);
  console.log(
    `fill ${(t1 - t0).toFixed(0)} ms, after fill ${(t2 - t1).toFixed(0)} ms, cpu ${((c.user + c.system) / 1000).toFixed(0)}`,
  );
  await rm(store.root, { recursive: true, force: true });
}
