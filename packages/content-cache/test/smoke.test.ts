import { mkdtemp, writeFile, mkdir, readFile, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';

it('smoke', async () => {
  const root = await mkdtemp(join(tmpdir(), 'cc-'));
  const store = await openContentStore({ root });
  const key = { provider: 'git', declaration: { source: 'x' }, version: 'v1', contentId: 'c1' };
  const t = await store.acquire(key, async (dest) => {
    await mkdir(join(dest, 'a'), { recursive: true });
    await writeFile(join(dest, 'a', 'SKILL.md'), 'hi');
  });
  expect(t.fromCache).toBe(false);
  expect(await readFile(join(t.linkPath, 'a', 'SKILL.md'), 'utf8')).toBe('hi');
  const t2 = await store.acquire(key, async () => { throw new Error('no'); });
  expect(t2.fromCache).toBe(true);
  console.log(t, await readlink(t.linkPath), await store.list(), await store.verify(), await store.gc());
});
