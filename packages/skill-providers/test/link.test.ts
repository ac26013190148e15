import { lstat, mkdir, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry, linkSkills, localProvider, prepareSkills } from '@agentproto/skill-providers';
import { linkSkillsWith } from '../src/link/link.js';
import { newCache, writeSpec } from './support/skills.js';
import { tempDir } from './support/temp.js';

/** Two skills prepared from local folders into a fresh store. */
async function prepared() {
  const root = await tempDir();
  await writeSpec(root, {
    'review/SKILL.md': '---\nname: review\n---\n# review\n',
    'review/scripts/run.sh': { text: '#!/bin/sh\n', mode: 0o755 },
    'review/docs/link.md': { link: '../SKILL.md' },
    'deploy/SKILL.md': '---\nname: deploy\n---\n# deploy\n',
  });
  const cache = await newCache();
  const registry = createRegistry([localProvider({ roots: [root] })]);
  const skills = await prepareSkills(
    [
      { provider: 'local', source: root, version: '*', path: 'review', name: 'review' },
      { provider: 'local', source: root, version: '*', path: 'deploy', name: 'deploy' },
    ],
    { cache, registry },
  );
  return { skills, root, cache, registry };
}

describe('linkSkills', () => {
  it('links each skill as DIR/<name> into the store; a re-run replaces only its own links', async () => {
    const { skills } = await prepared();
    const dir = join(await tempDir(), '.claude', 'skills');
    const first = await linkSkills(skills, dir);
    expect(first).toEqual([
      { name: 'review', path: join(dir, 'review'), kind: 'link', replaced: false },
      { name: 'deploy', path: join(dir, 'deploy'), kind: 'link', replaced: false },
    ]);
    expect(await readlink(join(dir, 'review'))).toBe(skills[0]!.dir);
    expect(await readFile(join(dir, 'review', 'SKILL.md'), 'utf8')).toContain('# review');
    await writeFile(join(dir, 'notes.txt'), 'mine\n');
    const second = await linkSkills(skills, dir);
    expect(second.map((s) => s.replaced)).toEqual([true, true]);
    expect((await readdir(dir)).sort()).toEqual(['deploy', 'notes.txt', 'review']);
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('copies with copy: files, modes and inner links kept, a marker; a re-run replaces its copy, and a link replaces a copy', async () => {
    const { skills } = await prepared();
    const dir = join(await tempDir(), 'skills');
    await linkSkills(skills, dir, { copy: true });
    const review = join(dir, 'review');
    expect((await lstat(review)).isDirectory()).toBe(true);
    expect(await readFile(join(review, 'SKILL.md'), 'utf8')).toContain('# review');
    expect((await lstat(join(review, 'scripts/run.sh'))).mode & 0o777).toBe(0o755);
    expect(await readlink(join(review, 'docs/link.md'))).toBe('../SKILL.md');
    expect((await readdir(review)).sort()).toEqual(['.agentproto-copy', 'SKILL.md', 'docs', 'scripts']);
    expect((await linkSkills(skills, dir, { copy: true })).map((s) => s.replaced)).toEqual([true, true]);
    expect((await linkSkills(skills, dir)).map((s) => s.kind)).toEqual(['link', 'link']);
    expect(await readlink(review)).toBe(skills[0]!.dir);
    // Nothing left behind: no temporary or set-aside entries.
    expect((await readdir(dir)).sort()).toEqual(['deploy', 'review']);
  });

  for (const [what, make] of [
    ['a file', (path: string) => writeFile(path, 'theirs\n')],
    [
      'a folder',
      async (path: string) => {
        await mkdir(path);
        await writeFile(join(path, 'SKILL.md'), 'theirs\n');
      },
    ],
    ['a symbolic link to elsewhere', (path: string) => symlink('/etc', path)],
  ] as const) {
    it(`refuses to replace ${what} it did not create, and changes nothing in the folder`, async () => {
      const { skills } = await prepared();
      const dir = await tempDir();
      await make(join(dir, 'deploy'));
      for (const copy of [false, true]) {
        await expect(linkSkills(skills, dir, { copy })).rejects.toMatchObject({
          code: 'SKILL_LINK_CONFLICT',
          path: join(dir, 'deploy'),
          found: what,
          message: expect.stringContaining(join(dir, 'deploy')),
        });
        // Checked before anything changed: the skill before it was not linked either.
        expect(await readdir(dir)).toEqual(['deploy']);
      }
      const stats = await lstat(join(dir, 'deploy'));
      if (what === 'a file') expect(await readFile(join(dir, 'deploy'), 'utf8')).toBe('theirs\n');
      if (what === 'a folder') expect(await readFile(join(dir, 'deploy', 'SKILL.md'), 'utf8')).toBe('theirs\n');
      if (what === 'a symbolic link to elsewhere') expect(await readlink(join(dir, 'deploy'))).toBe('/etc');
      expect(stats).toBeDefined();
    });
  }

  it('a link into another folder named like the store is not its own', async () => {
    const { skills } = await prepared();
    const dir = await tempDir();
    const elsewhere = join(await tempDir(), 'links', 'a'.repeat(64));
    await symlink(elsewhere, join(dir, 'review'));
    await expect(linkSkills(skills, dir)).rejects.toMatchObject({
      code: 'SKILL_LINK_CONFLICT',
      path: join(dir, 'review'),
    });
  });

  it('a name that is not one safe segment, or given twice, is refused before anything is made', async () => {
    const { skills } = await prepared();
    const dir = join(await tempDir(), 'skills');
    for (const name of ['..', '.', 'a/b', '../x', '', 'Review', 'a\0b']) {
      await expect(linkSkills([{ name, dir: skills[0]!.dir }], dir)).rejects.toMatchObject({
        code: 'SKILL_LINK_NAME_INVALID',
      });
    }
    await expect(linkSkills([skills[0]!, skills[0]!], dir)).rejects.toMatchObject({ code: 'SKILL_LINK_NAME_INVALID' });
    await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  describe('a name that appears between the check and the change is never clobbered', () => {
    const attacks = [
      [
        'a folder',
        async (path: string) => {
          await mkdir(path);
          await writeFile(join(path, 'SKILL.md'), 'theirs\n');
        },
      ],
      ['a file', (path: string) => writeFile(path, 'theirs\n')],
      ['a symbolic link', (path: string) => symlink('/etc', path)],
    ] as const;
    for (const copy of [false, true]) {
      for (const [what, make] of attacks) {
        it(`${copy ? 'copy' : 'link'}: ${what} where the name was free`, async () => {
          const { skills } = await prepared();
          const dir = await tempDir();
          const hooks = { beforeCommit: (path: string) => (path.endsWith('/review') ? make(path) : undefined) };
          await expect(linkSkillsWith(skills, dir, { copy }, hooks)).rejects.toMatchObject({
            code: 'SKILL_LINK_CONFLICT',
            path: join(dir, 'review'),
          });
          const path = join(dir, 'review');
          if (what === 'a folder') expect(await readFile(join(path, 'SKILL.md'), 'utf8')).toBe('theirs\n');
          if (what === 'a file') expect(await readFile(path, 'utf8')).toBe('theirs\n');
          if (what === 'a symbolic link') expect(await readlink(path)).toBe('/etc');
          // No temporary entry is left.
          expect((await readdir(dir)).filter((name) => name.startsWith('.'))).toEqual([]);
        });
      }
    }

    it('link: a folder that took the place of its own link between the check and the rename', async () => {
      const { skills } = await prepared();
      const dir = await tempDir();
      await linkSkills(skills, dir);
      const hooks = {
        beforeCommit: async (path: string) => {
          if (!path.endsWith('/review')) return;
          await rm(path);
          await mkdir(path);
          await writeFile(join(path, 'SKILL.md'), 'theirs\n');
        },
      };
      await expect(linkSkillsWith(skills, dir, {}, hooks)).rejects.toMatchObject({
        code: 'SKILL_LINK_CONFLICT',
        path: join(dir, 'review'),
      });
      expect(await readFile(join(dir, 'review', 'SKILL.md'), 'utf8')).toBe('theirs\n');
    });
  });
});
