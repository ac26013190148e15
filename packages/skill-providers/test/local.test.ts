import { readFile, readdir, stat, writeFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry, localProvider, prepareSkills } from '@agentproto/skill-providers';
import { type Spec, newCache, writeSpec } from './support/skills.js';
import { tempDir } from './support/temp.js';

const registry = createRegistry([localProvider()]);

async function sourceWith(spec: Spec) {
  const dir = await tempDir();
  await writeSpec(dir, spec);
  return dir;
}

const entry = (source: string, path = 'skills/a', name = 'a') => ({
  provider: 'local',
  source,
  version: '*',
  path,
  name,
});

describe('the local provider', () => {
  it('prepares a folder: SKILL.md and scripts with their executable bit, then a hit while nothing changed', async () => {
    const source = await sourceWith({
      'skills/a/SKILL.md': '# a\n',
      'skills/a/run.sh': { text: 'echo\n', mode: 0o755 },
    });
    const cache = await newCache();
    const [first] = await prepareSkills([entry(source)], { cache, registry });
    expect(first).toMatchObject({ name: 'a', provider: 'local', hit: false });
    expect(first!.version).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await readFile(join(first!.dir, 'SKILL.md'), 'utf8')).toBe('# a\n');
    expect((await stat(join(first!.dir, 'run.sh'))).mode & 0o777).toBe(0o755);
    const [second] = await prepareSkills([entry(source)], { cache, registry });
    expect(second).toEqual({ ...first, hit: true, from: 'store' });

    await writeFile(join(source, 'skills/a/SKILL.md'), '# a, edited\n');
    const [third] = await prepareSkills([entry(source)], { cache, registry });
    expect(third!.hit).toBe(false);
    expect(third!.version).not.toBe(first!.version);
    // The declaration's directory now shows the new tree.
    expect(await readFile(join(third!.dir, 'SKILL.md'), 'utf8')).toBe('# a, edited\n');
    expect(third!.dir).toBe(first!.dir);
  });

  it('strips setuid, setgid and sticky bits on publication and keeps the executable bit', async () => {
    const source = await sourceWith({
      'skills/a/SKILL.md': '# a\n',
      'skills/a/suid': { text: 'x', mode: 0o4755 },
      'skills/a/sgid': { text: 'x', mode: 0o2755 },
    });
    const [skill] = await prepareSkills([entry(source)], { cache: await newCache(), registry });
    // Setting the bits needs no privilege on one's own files; check they were really set.
    expect((await stat(join(source, 'skills/a/suid'))).mode & 0o7777).toBe(0o4755);
    expect((await stat(join(skill!.dir, 'suid'))).mode & 0o7777).toBe(0o755);
    expect((await stat(join(skill!.dir, 'sgid'))).mode & 0o7777).toBe(0o755);
  });

  it('keeps a link that stays inside the selected directory, as a link', async () => {
    const source = await sourceWith({
      'skills/a/SKILL.md': '# a\n',
      'skills/a/docs/x.md': 'x',
      'skills/a/readme': { link: 'docs/x.md' },
    });
    const [skill] = await prepareSkills([entry(source)], { cache: await newCache(), registry });
    expect(await readlink(join(skill!.dir, 'readme'))).toBe('docs/x.md');
    expect(await readFile(join(skill!.dir, 'readme'), 'utf8')).toBe('x');
  });

  it('refuses a link that leaves the selected directory, even into the same source, and publishes nothing', async () => {
    const source = await sourceWith({
      'skills/a/SKILL.md': '# a\n',
      'skills/shared.md': 's',
      'skills/a/shared': { link: '../shared.md' },
    });
    const cache = await newCache();
    const failure = await prepareSkills([entry(source)], { cache, registry }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'SKILL_UNSAFE_TREE', entry: { index: 0, name: 'a' } });
    expect(String((failure as Error).message)).toContain('skill #0 "a"');
    expect((await cache.list()).objects).toEqual([]);
  });

  it('refuses a directory without SKILL.md, or with SKILL.md as a link, and publishes nothing', async () => {
    const specs: Spec[] = [
      { 'skills/a/README.md': 'r' },
      { 'skills/a/real.md': '# a', 'skills/a/SKILL.md': { link: 'real.md' } },
    ];
    for (const spec of specs) {
      const source = await sourceWith(spec);
      const cache = await newCache();
      const failure = await prepareSkills([entry(source)], { cache, registry }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'SKILL_MD_MISSING', entry: { index: 0, name: 'a' } });
      expect((await cache.list()).objects).toEqual([]);
      expect(await readdir(join(cache.root, 'staging'))).toEqual([]);
    }
  });

  it('pins a digest: the pinned tree prepares, another one is refused', async () => {
    const source = await sourceWith({ 'skills/a/SKILL.md': '# a\n' });
    const cache = await newCache();
    const [skill] = await prepareSkills([entry(source)], { cache, registry });
    const pinned = { ...entry(source), version: skill!.version };
    expect((await prepareSkills([pinned], { cache, registry }))[0]!.hit).toBe(true);
    await writeFile(join(source, 'skills/a/SKILL.md'), '# changed\n');
    await expect(prepareSkills([pinned], { cache, registry })).rejects.toMatchObject({
      code: 'SKILL_VERSION_MISMATCH',
    });
  });

  it('refuses sources outside the allowed roots, relative sources and unknown options, before anything runs', async () => {
    const source = await sourceWith({ 'skills/a/SKILL.md': '# a\n' });
    const elsewhere = await tempDir();
    const strict = createRegistry([localProvider({ roots: [elsewhere] })]);
    await expect(prepareSkills([entry(source)], { cache: await newCache(), registry: strict })).rejects.toMatchObject({
      code: 'SKILL_CONFIG_INVALID',
    });
    await expect(prepareSkills([entry('relative/dir')], { cache: await newCache(), registry })).rejects.toMatchObject({
      code: 'SKILL_CONFIG_INVALID',
    });
    await expect(
      prepareSkills([{ ...entry(source), config: { depth: 1 } }], { cache: await newCache(), registry }),
    ).rejects.toMatchObject({
      code: 'SKILL_CONFIG_INVALID',
    });
  });
});
