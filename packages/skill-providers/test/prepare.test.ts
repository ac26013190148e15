import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry, localSandbox, prepareSkills, resolveSkills, type Sandbox } from '@agentproto/skill-providers';
import { ScriptedProvider, entryOf } from './support/scripted-provider.js';
import { newCache } from './support/skills.js';
import { tempDir } from './support/temp.js';

const skill = (name: string) => ({ 'SKILL.md': `# ${name}\n` });

async function setup(trees: Record<string, Record<string, string>>) {
  const provider = new ScriptedProvider(trees);
  const privateRoot = await tempDir();
  return {
    provider,
    registry: createRegistry([provider]),
    cache: await newCache(),
    sandbox: localSandbox({ privateRoot }),
    privateRoot,
  };
}

describe('prepareSkills', () => {
  it('returns one result per entry, in declaration order, with the declaration directory of each', async () => {
    const { registry, cache, sandbox } = await setup({ a: skill('a'), b: skill('b') });
    const prepared = await prepareSkills([entryOf('b'), entryOf('a')], { cache, registry, sandbox });
    expect(prepared.map((p) => [p.name, p.version, p.contentId, p.hit])).toEqual([
      ['b', 'v-b', 'c-b', false],
      ['a', 'v-a', 'c-a', false],
    ]);
    expect(existsSync(join(prepared[0]!.dir, 'SKILL.md'))).toBe(true);
  });

  it('validates every entry before resolving any: a bad last entry stops the whole declaration', async () => {
    const { provider, registry, cache, sandbox } = await setup({ a: skill('a') });
    await expect(prepareSkills([entryOf('a'), entryOf('missing')], { cache, registry, sandbox })).rejects.toMatchObject(
      {
        code: 'SKILL_SOURCE_INVALID',
        reason: 'NO_TREE',
        entry: { index: 1, name: 'missing' },
        phase: 'validate',
      },
    );
    expect(provider.count('resolve')).toBe(0);
  });

  it('fails on an unknown provider, listing the known ones, before anything runs', async () => {
    const { provider, registry, cache, sandbox } = await setup({ a: skill('a') });
    const failure = await prepareSkills([entryOf('a'), { ...entryOf('a', 'b'), provider: 'svn' }], {
      cache,
      registry,
      sandbox,
    }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'SKILL_PROVIDER_UNKNOWN', provider: 'svn', known: ['scripted'] });
    expect((failure as Error).message).toContain('skill #1 "b"');
    expect(provider.count('resolve')).toBe(0);
  });

  it('resolves on every preparation, hits included, and fetches only on a miss', async () => {
    const { provider, registry, cache, sandbox } = await setup({ a: skill('a') });
    await prepareSkills([entryOf('a')], { cache, registry, sandbox });
    const [again] = await prepareSkills([entryOf('a')], { cache, registry, sandbox });
    expect(again!.hit).toBe(true);
    expect([provider.count('resolve'), provider.count('fetch')]).toEqual([2, 1]);
  });

  it('prepares identical entries once, whatever their names', async () => {
    const { provider, registry, cache, sandbox } = await setup({ a: skill('a') });
    const prepared = await prepareSkills([entryOf('a', 'one'), entryOf('a', 'two')], { cache, registry, sandbox });
    expect(prepared.map((p) => p.name)).toEqual(['one', 'two']);
    expect(prepared[0]!.dir).toBe(prepared[1]!.dir);
    expect([provider.count('resolve'), provider.count('fetch')]).toEqual([1, 1]);
  });

  it('keeps at most `concurrency` entries in flight', async () => {
    const trees = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`s${i}`, skill(`s${i}`)]));
    const { provider, registry, cache, sandbox } = await setup(trees);
    await prepareSkills(
      Object.keys(trees).map((name) => entryOf(name)),
      { cache, registry, sandbox, concurrency: 3 },
    );
    expect(provider.maxActive).toBeLessThanOrEqual(3);
    expect(provider.maxActive).toBeGreaterThan(1);
  });

  it('gives each entry its own private folder and removes it after success and failure', async () => {
    const { provider, registry, cache, sandbox, privateRoot } = await setup({
      a: skill('a'),
      bad: { 'README.md': 'no skill' },
    });
    await prepareSkills([entryOf('a')], { cache, registry, sandbox });
    await expect(prepareSkills([entryOf('bad')], { cache, registry, sandbox })).rejects.toMatchObject({
      code: 'SKILL_MD_MISSING',
    });
    const dirs = new Set(provider.calls.flatMap((call) => (call.privateDir ? [call.privateDir] : [])));
    expect(dirs.size).toBe(2);
    expect(await readdir(privateRoot)).toEqual([]);
  });

  it('reports a private folder that cannot be removed as a failure, even after a successful preparation', async () => {
    const { registry, cache } = await setup({ a: skill('a') });
    const base = localSandbox({ privateRoot: await tempDir() });
    const sandbox: Sandbox = {
      ...base,
      removePrivateDir: async () => Promise.reject(new Error('sandbox unreachable')),
    };
    await expect(prepareSkills([entryOf('a')], { cache, registry, sandbox })).rejects.toMatchObject({
      code: 'SKILL_CLEANUP_FAILED',
      entry: { name: 'a' },
    });
  });

  it('cancels the other entries when one fails, and publishes none of them', async () => {
    const { provider, registry, cache, sandbox, privateRoot } = await setup({ a: skill('a'), b: skill('b'), bad: {} });
    // a and b fetch slowly unless cancelled; bad is refused at resolution.
    provider.hooks.fetch = async (context) => {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 2000);
        context.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(context.signal.reason);
          },
          {
            once: true,
          },
        );
      });
    };
    provider.hooks.resolve = async (_context, source) => {
      if (source === 'bad') {
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw Object.assign(new Error('refused'), { code: 'REFUSED' });
      }
    };
    const bad = entryOf('bad');
    const started = Date.now();
    const failure = await prepareSkills([entryOf('a'), entryOf('b'), bad], { cache, registry, sandbox }).catch(
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({
      code: 'SKILL_RESOLVE_FAILED',
      reason: 'REFUSED',
      entry: { name: 'bad' },
      phase: 'resolve',
    });
    expect(Date.now() - started).toBeLessThan(1500);
    expect((await cache.list()).objects).toEqual([]);
    expect(await readdir(privateRoot)).toEqual([]);
  });

  it.each(['before', 'resolve', 'fetch'] as const)(
    'cancelled %s: rejects with SKILL_ABORTED, publishes nothing, leaves no private folder',
    async (phase) => {
      const { provider, registry, cache, sandbox, privateRoot } = await setup({ a: skill('a') });
      const controller = new AbortController();
      const pause = async (context: { signal: AbortSignal }) => {
        controller.abort(new Error('user cancelled'));
        // A provider that keeps working a little after the signal: the core waits for it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        context.signal.throwIfAborted();
      };
      if (phase === 'before') controller.abort();
      if (phase === 'resolve') provider.hooks.resolve = pause;
      if (phase === 'fetch') provider.hooks.fetch = pause;
      await expect(
        prepareSkills([entryOf('a')], { cache, registry, sandbox, signal: controller.signal }),
      ).rejects.toMatchObject({ code: 'SKILL_ABORTED' });
      expect((await cache.list()).objects).toEqual([]);
      expect(await readdir(privateRoot)).toEqual([]);
      expect(await readdir(join(cache.root, 'staging'))).toEqual([]);
    },
  );

  it('resolveSkills authorizes and pins every entry without fetching, and says which are cached', async () => {
    const { provider, registry, cache, sandbox } = await setup({ a: skill('a'), b: skill('b') });
    await prepareSkills([entryOf('a')], { cache, registry, sandbox });
    const resolved = await resolveSkills([entryOf('a'), entryOf('b')], { cache, registry, sandbox });
    expect(resolved).toEqual([
      { name: 'a', provider: 'scripted', version: 'v-a', contentId: 'c-a', cached: true, egressHosts: [] },
      { name: 'b', provider: 'scripted', version: 'v-b', contentId: 'c-b', cached: false, egressHosts: [] },
    ]);
    expect(provider.count('fetch')).toBe(1);
  });

  it('reports progress: resolved for every entry, fetch-start and fetch-done on a miss, hit otherwise', async () => {
    const { registry, cache, sandbox } = await setup({ a: skill('a') });
    const events: string[] = [];
    const onProgress = (event: { type: string; name: string }) => events.push(`${event.type}:${event.name}`);
    await prepareSkills([entryOf('a')], { cache, registry, sandbox, onProgress });
    await prepareSkills([entryOf('a')], { cache, registry, sandbox, onProgress });
    expect(events).toEqual(['resolved:a', 'fetch-start:a', 'fetch-done:a', 'resolved:a', 'hit:a']);
  });
});
