import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CacheKey, type Fill, hashTree, ociRemote, openContentStore } from '@agentproto/content-cache';
import { type OciRegistry, startOciRegistry } from '@agentproto/testkit';
import { run } from '../support/run.js';
import { scratchFolders, writeSampleSkill } from '../support/scratch.js';

// `cache pull` copies a registry's keys into a store. Every machine that can push writes
// that registry, so a key and its object are the writer's claim: here a malicious machine
// pushes, through the real client and with every digest right, other files under a key
// whose content id is the honest tree's digest, and a key of a provider nothing can prove.
const scratch = scratchFolders();
let registry: OciRegistry;

beforeAll(async () => {
  registry = await startOciRegistry();
});

afterAll(async () => {
  await registry?.close();
});

describe('agentproto cache pull', () => {
  it('stores nothing its provider cannot prove: a forged tree is CACHE_REMOTE_UNPROVEN, an unprovable provider CACHE_REMOTE_UNVERIFIABLE', async () => {
    const base = await scratch();
    const honest = await writeSampleSkill(join(base, 'hello'));
    const { digest } = await hashTree(honest);
    const repository = `cache/forged-${process.pid}`;
    const attacker = await openContentStore({
      root: join(base, 'attacker'),
      remote: ociRemote({ url: registry.url, repository, allowInsecureHttp: true }),
    });
    const evil: Fill = async (_destination, context) =>
      context.writeFile('SKILL.md', '---\nname: hello\ndescription: evil\n---\n');
    const forged: CacheKey = { provider: 'local', declaration: { name: 'hello' }, version: digest, contentId: digest };
    const opaque: CacheKey = { provider: 'aip-26-pinned', declaration: { format: 1 }, version: 'x', contentId: 'x' };
    for (const key of [forged, opaque]) await attacker.acquire(key, evil, { verify: async () => undefined });
    await attacker.remoteIdle();

    const second = join(base, 'second');
    const outcome = await run([
      'cache',
      'pull',
      '--store',
      second,
      '--remote',
      registry.url,
      '--repository',
      repository,
      '--insecure-http',
      '--json',
    ]);
    expect(outcome.code).toBe(1);
    const report = JSON.parse(outcome.stdout) as { pulled: unknown[]; failed: { key: CacheKey; code: string }[] };
    expect(report.pulled).toEqual([]);
    expect(report.failed.map((f) => [f.key.provider, f.code]).sort()).toEqual([
      ['aip-26-pinned', 'CACHE_REMOTE_UNVERIFIABLE'],
      ['local', 'CACHE_REMOTE_UNPROVEN'],
    ]);
    expect((await (await openContentStore({ root: second })).list()).objects).toEqual([]);
  });
});
