import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedGitEnv, run } from '@agentproto/testkit';
import {
  type SkillLock,
  lockSkills,
  parseSkillLockText,
  prepareSkills,
  resolveSkills,
} from '@agentproto/skill-providers';
import { recordingSandbox, servedRepo } from './support/git.js';
import { newCache } from './support/skills.js';

const review = (tag: string) => ({ 'skills/review/SKILL.md': `---\nname: review\n---\n# review ${tag}\n` });
const deploy = (tag: string) => ({ 'skills/deploy/SKILL.md': `---\nname: deploy\n---\n# deploy ${tag}\n` });

/** Moves a branch of the served repository, as a push would. */
async function moveBranch(repoPath: string, branch: string, commit: string) {
  await run('git', ['update-ref', `refs/heads/${branch}`, commit], { env: isolatedGitEnv({ GIT_DIR: repoPath }) });
}

async function lockedRepo() {
  const served = await servedRepo({
    commits: [{ files: { ...review('one'), ...deploy('one') } }, { files: review('two') }],
    branches: [{ name: 'main', from: 0 }],
  });
  const { sandbox } = await recordingSandbox();
  const declaration = [`${served.url}@main#skills/review`, `${served.url}@main#skills/deploy`];
  return { ...served, sandbox, declaration };
}

describe('lock files', () => {
  it('lockSkills records each entry; a locked preparation after a push prepares the locked commit, an unlocked one the new', async () => {
    const { repo, sandbox, declaration } = await lockedRepo();
    const cache = await newCache();
    const lock = await lockSkills(declaration, { cache, sandbox });
    expect(lock).toEqual({
      lockfileVersion: 1,
      skills: [
        {
          declaration: {
            provider: 'git',
            source: expect.any(String),
            version: 'main',
            path: 'skills/review',
            config: {},
          },
          name: 'review',
          provider: 'git',
          version: repo.commits[0],
          contentId: await repo.treeOf(0, 'skills/review'),
        },
        expect.objectContaining({
          name: 'deploy',
          version: repo.commits[0],
          contentId: await repo.treeOf(0, 'skills/deploy'),
        }),
      ],
    });
    // Nothing was fetched: a lock only resolves.
    expect((await resolveSkills(declaration, { cache, sandbox })).map((s) => s.cached)).toEqual([false, false]);

    // The lock travels as JSON and is read back through its schema.
    const text = `${JSON.stringify(lock, null, 2)}\n`;
    const locked = parseSkillLockText(text, { source: 'skills.lock.json' });

    await moveBranch(repo.path, 'main', repo.commits[1]!);
    const [fromLock] = await prepareSkills(declaration, { cache, sandbox, locked });
    expect(fromLock).toMatchObject({ name: 'review', version: repo.commits[0], hit: false });
    expect(await readFile(join(fromLock!.dir, 'SKILL.md'), 'utf8')).toContain('# review one');

    const [current] = await prepareSkills(declaration, { cache, sandbox });
    expect(current).toMatchObject({ version: repo.commits[1] });
    expect(await readFile(join(current!.dir, 'SKILL.md'), 'utf8')).toContain('# review two');

    // The locked link is its own: preparing the moved branch did not change what the lock prepared.
    expect(await readFile(join(fromLock!.dir, 'SKILL.md'), 'utf8')).toContain('# review one');
    const again = await prepareSkills(declaration, { cache, sandbox, locked });
    expect(again[0]).toMatchObject({ version: repo.commits[0], hit: true });
  });

  it('a changed declaration drifts: an entry the lock lacks, a record no entry matches; nothing runs', async () => {
    const { url, sandbox, declaration } = await lockedRepo();
    const cache = await newCache();
    const lock = await lockSkills(declaration, { cache, sandbox });
    const recording = await recordingSandbox();

    const changed = [`${url}@v2#skills/review`, declaration[1]!];
    await expect(prepareSkills(changed, { cache, sandbox: recording.sandbox, locked: lock })).rejects.toMatchObject({
      code: 'SKILL_LOCK_DRIFT',
      drift: 'unlocked',
      entry: { index: 0, name: 'review', provider: 'git' },
      message: expect.stringContaining('skill #0 "review" (git)'),
    });
    await expect(
      prepareSkills([declaration[0]!], { cache, sandbox: recording.sandbox, locked: lock }),
    ).rejects.toMatchObject({
      code: 'SKILL_LOCK_DRIFT',
      drift: 'extra',
      entry: { index: 1, name: 'deploy' },
    });
    // Renaming an entry is a change of the declaration too.
    const renamed = [
      { provider: 'git', source: url, version: 'main', path: 'skills/review', name: 'reviewer' },
      declaration[1]!,
    ];
    await expect(prepareSkills(renamed, { cache, sandbox: recording.sandbox, locked: lock })).rejects.toMatchObject({
      code: 'SKILL_LOCK_DRIFT',
      drift: 'unlocked',
    });
    expect(recording.runs).toEqual([]);
  });

  it('a forged lock (the content id of another tree) drifts before anything is fetched; nothing is published under that id', async () => {
    const { repo, sandbox, declaration } = await lockedRepo();
    const cache = await newCache();
    const lock = await lockSkills(declaration, { cache, sandbox });
    const otherTree = await repo.treeOf(0, 'skills/deploy');
    const forged: SkillLock = {
      ...lock,
      skills: [{ ...lock.skills[0]!, contentId: otherTree }, lock.skills[1]!],
    };
    const failure = await prepareSkills(declaration, { cache, sandbox, locked: forged }).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      code: 'SKILL_LOCK_DRIFT',
      drift: 'content',
      entry: { index: 0, name: 'review' },
      expected: { version: repo.commits[0], contentId: otherTree },
      actual: { version: repo.commits[0], contentId: await repo.treeOf(0, 'skills/review') },
    });
    // Nothing of the forged record was published: no object in the store holds the review skill.
    const objects = await readdir(join(cache.root, 'objects')).catch(() => [] as string[]);
    for (const object of objects) {
      const text = await readFile(join(cache.root, 'objects', object, 'content', 'SKILL.md'), 'utf8').catch(() => '');
      expect(text).not.toContain('# review');
    }
    // A forged version (a commit that is not the lock's tree) drifts too.
    const forgedVersion: SkillLock = {
      ...lock,
      skills: [{ ...lock.skills[0]!, version: repo.commits[1]! }, lock.skills[1]!],
    };
    await expect(prepareSkills(declaration, { cache, sandbox, locked: forgedVersion })).rejects.toMatchObject({
      code: 'SKILL_LOCK_DRIFT',
      drift: 'content',
    });
  });

  it('a locked preparation still authorizes every entry against the origin: a revoked credential fails on a hit', async () => {
    let password = 'first-password';
    const served = await servedRepo(
      { commits: [{ files: review('one') }] },
      { auth: (user, pass) => user === 'bot' && pass === password },
    );
    const { sandbox } = await recordingSandbox();
    const declaration = [`${served.url}@main#skills/review`];
    const cache = await newCache();
    const vault = () => ({ username: 'bot', password: 'first-password' });
    const lock = await lockSkills(declaration, { cache, sandbox, vault });
    await prepareSkills(declaration, { cache, sandbox, vault, locked: lock });
    expect((await prepareSkills(declaration, { cache, sandbox, vault, locked: lock }))[0]).toMatchObject({ hit: true });
    password = 'rotated';
    await expect(prepareSkills(declaration, { cache, sandbox, vault, locked: lock })).rejects.toMatchObject({
      code: 'SKILL_AUTH_FAILED',
      entry: { index: 0, name: 'review' },
    });
  });

  it('a lock that breaks the lock schema is SKILL_LOCK_INVALID naming the value', async () => {
    const cache = await newCache();
    await expect(
      prepareSkills(['https://git.example.com/a/b.git#skills/review'], {
        cache,
        locked: { lockfileVersion: 2, skills: [] } as unknown as SkillLock,
      }),
    ).rejects.toMatchObject({ code: 'SKILL_LOCK_INVALID', path: '/lockfileVersion' });
    expect(() => parseSkillLockText('{"lockfileVersion": 1, "skills": [', { source: 'skills.lock.json' })).toThrow(
      expect.objectContaining({ code: 'SKILL_LOCK_INVALID', message: expect.stringContaining('skills.lock.json') }),
    );
  });
});
