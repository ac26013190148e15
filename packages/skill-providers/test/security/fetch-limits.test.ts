import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry, gitProvider, prepareSkills, type LocalSandboxOptions } from '@agentproto/skill-providers';
import { recordingSandbox, servedRepo } from '../support/git.js';
import { newCache } from '../support/skills.js';

const MiB = 1024 * 1024;
const DEEP = Array.from({ length: 39 }, () => 'd').join('/');

/** One repository with a skill past each cap, and one within them all. */
function files() {
  const tree: Record<string, string | Buffer> = {
    'ok/SKILL.md': '---\nname: ok\n---\n',
    'deep/SKILL.md': '---\nname: deep\n---\n',
    [`deep/${DEEP}/x.md`]: 'deep',
    'wide/SKILL.md': '---\nname: wide\n---\n',
    'heavy/SKILL.md': '---\nname: heavy\n---\n',
  };
  for (let i = 0; i < 60; i += 1) tree[`wide/f${String(i).padStart(2, '0')}.md`] = `file ${i}`;
  // 6 MiB of compressible files: a pack of a few KiB, so only the directory's byte count stops them.
  for (let i = 0; i < 12; i += 1)
    tree[`heavy/f${String(i).padStart(2, '0')}.bin`] = Buffer.alloc(512 * 1024, `pattern ${i} `);
  return tree;
}

/** What the store and the sandbox hold once a preparation failed: every list must be empty. */
async function leftovers(storeRoot: string, privateRoot: string) {
  const list = (dir: string) => readdir(dir).catch(() => [] as string[]);
  return {
    objects: await list(join(storeRoot, 'objects')),
    links: await list(join(storeRoot, 'links')),
    staging: await list(join(storeRoot, 'staging')),
    private: await list(privateRoot),
  };
}

const sandboxes: Array<[string, LocalSandboxOptions]> = [
  ['system git', {}],
  ['isomorphic-git', { capabilities: { git: false, ssh: false } }],
];

describe.each(sandboxes)('skill fetch caps (%s)', (_name, sandboxOptions) => {
  it('refuses a skill past each cap (entries, bytes, depth) with SKILL_TOO_LARGE naming the limit; nothing is published, no staging or private folder is left', async () => {
    const { url } = await servedRepo({ commits: [{ files: files() }] });
    const cases: Array<{
      path: string;
      limit: 'files' | 'bytes' | 'depth';
      max: number;
      call?: object;
      provider?: object;
    }> = [
      { path: 'wide', limit: 'files', max: 50, call: { maxFiles: 50 } },
      { path: 'heavy', limit: 'bytes', max: 2 * MiB, provider: { maxBytes: 2 * MiB } },
      { path: 'deep', limit: 'depth', max: 32 },
    ];
    for (const { path, limit, max, call, provider } of cases) {
      const { sandbox, privateRoot } = await recordingSandbox(sandboxOptions);
      const cache = await newCache();
      const registry = createRegistry([gitProvider(provider ? { limits: provider } : {})]);
      const error = await prepareSkills([`${url}#${path}`], {
        cache,
        sandbox,
        registry,
        ...(call ? { limits: call } : {}),
      }).then(
        () => undefined,
        (failure: unknown) => failure as Record<string, unknown>,
      );
      expect(error, path).toMatchObject({ code: 'SKILL_TOO_LARGE', reason: 'GIT_LIMIT_EXCEEDED' });
      expect(error?.cause, path).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit, max, path });
      expect(String(error?.message)).toContain(url);
      expect(await leftovers(cache.root, privateRoot), path).toEqual({
        objects: [],
        links: [],
        staging: [],
        private: [],
      });
    }
  });

  it("a preparation's caps win over the provider's, and a skill within them is published", async () => {
    const { url } = await servedRepo({ commits: [{ files: files() }] });
    const { sandbox } = await recordingSandbox(sandboxOptions);
    const registry = createRegistry([gitProvider({ limits: { maxFiles: 5 } })]);
    await expect(prepareSkills([`${url}#wide`], { cache: await newCache(), sandbox, registry })).rejects.toMatchObject({
      code: 'SKILL_TOO_LARGE',
    });
    const [skill] = await prepareSkills([`${url}#wide`], {
      cache: await newCache(),
      sandbox,
      registry,
      limits: { maxFiles: 61 },
    });
    expect((await readdir(skill!.dir)).length).toBe(61);
  });
});
