import { randomBytes } from 'node:crypto';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderings, watchProc } from '@agentproto/testkit';
import { type BasicVault, prepareSkills, resolveSkills } from '@agentproto/skill-providers';
import { everyFileText, gitSubcommand, recordingSandbox, servedRepo } from './support/git.js';
import { newCache } from './support/skills.js';

const skillFiles = (tag: string) => ({
  'skills/review/SKILL.md': `---\nname: review\n---\n# review ${tag}\n`,
  'skills/review/scripts/check.sh': { content: '#!/bin/sh\necho ok\n', executable: true },
  'skills/review/docs/guide.md': 'guide\n',
});

describe('the git provider over HTTPS', () => {
  it('prepares a git string: the commit of the tag, the tree id of the directory, the files with their modes', async () => {
    const { repo, url } = await servedRepo({
      commits: [{ files: { ...skillFiles('v1'), 'README.md': 'root\n' } }],
      tags: [{ name: 'v1', target: 0 }],
    });
    const { sandbox } = await recordingSandbox();
    const [skill] = await prepareSkills([`${url}@v1#skills/review`], { cache: await newCache(), sandbox });
    expect(skill).toMatchObject({
      name: 'review',
      provider: 'git',
      version: repo.commits[0],
      contentId: await repo.treeOf(0, 'skills/review'),
      hit: false,
    });
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toContain('# review v1');
    expect((await lstat(join(skill!.dir, 'scripts/check.sh'))).mode & 0o777).toBe(0o755);
    expect((await lstat(join(skill!.dir, 'docs/guide.md'))).mode & 0o777).toBe(0o644);
    expect(await readdir(skill!.dir)).not.toContain('README.md');
  });

  it("opens the sandbox's network boundary to the source's own host before resolving, and fails when it refuses", async () => {
    const { url } = await servedRepo({ commits: [{ files: skillFiles('e') }] });
    const recording = await recordingSandbox();
    const asked: string[][] = [];
    const runsBefore: number[] = [];
    const host = new URL(url).host;
    const sandbox = {
      ...recording.sandbox,
      allowEgress: async (hosts: readonly string[]) => {
        asked.push([...hosts]);
        runsBefore.push(recording.runs.length);
      },
    };
    const cache = await newCache();
    await prepareSkills([`${url}#skills/review`], { cache, sandbox });
    expect(asked).toEqual([[host]]);
    expect(runsBefore).toEqual([0]);
    expect(recording.runs.length).toBeGreaterThan(0);
    expect((await resolveSkills([`${url}#skills/review`], { cache, sandbox }))[0]!.egressHosts).toEqual([host]);
    const closed = {
      ...recording.sandbox,
      allowEgress: async () => Promise.reject(Object.assign(new Error('host not allowed'), { code: 'EGRESS_DENIED' })),
    };
    await expect(
      prepareSkills([`${url}#skills/review`], { cache: await newCache(), sandbox: closed }),
    ).rejects.toMatchObject({
      code: 'SKILL_RESOLVE_FAILED',
      reason: 'EGRESS_DENIED',
    });
  });

  it('resolves annotated and lightweight tags to the commit they peel to', async () => {
    const { repo, url } = await servedRepo({
      commits: [{ files: skillFiles('one') }, { files: skillFiles('two') }],
      tags: [
        { name: 'light', target: 0 },
        { name: 'annotated', target: 1, annotated: true, message: 'release' },
      ],
    });
    const { sandbox } = await recordingSandbox();
    const resolved = await resolveSkills(
      [
        { provider: 'git', source: url, version: 'light', path: 'skills/review', name: 'light' },
        { provider: 'git', source: url, version: 'refs/tags/annotated', path: 'skills/review', name: 'annotated' },
      ],
      { cache: await newCache(), sandbox },
    );
    expect(resolved.map((r) => r.version)).toEqual([repo.commits[0], repo.commits[1]]);
  });

  it('refuses a short name that is both a branch and a tag, and accepts either full name', async () => {
    const { repo, url } = await servedRepo({
      commits: [
        { branch: 'main', files: skillFiles('main') },
        { branch: 'release', from: 0, files: skillFiles('branch') },
      ],
      tags: [{ name: 'release', target: 0 }],
    });
    const { sandbox } = await recordingSandbox();
    const cache = await newCache();
    const entry = (version: string) => [
      { provider: 'git', source: url, version, path: 'skills/review', name: 'review' },
    ];
    await expect(prepareSkills(entry('release'), { cache, sandbox })).rejects.toMatchObject({
      code: 'SKILL_REF_AMBIGUOUS',
      reason: 'GIT_AMBIGUOUS_REF',
      phase: 'resolve',
    });
    expect((await resolveSkills(entry('refs/heads/release'), { cache, sandbox }))[0]!.version).toBe(
      repo.head('release'),
    );
    expect((await resolveSkills(entry('refs/tags/release'), { cache, sandbox }))[0]!.version).toBe(repo.commits[0]);
  });

  it('expands a short commit id by fetching history, and refuses an unknown one', async () => {
    const { repo, url } = await servedRepo({
      commits: [{ files: skillFiles('a') }, { files: skillFiles('b') }, { files: { 'x.md': 'x' } }],
    });
    const { sandbox } = await recordingSandbox();
    const cache = await newCache();
    const [skill] = await prepareSkills([`${url}@${repo.commits[0]!.slice(0, 8)}#skills/review`], { cache, sandbox });
    expect(skill!.version).toBe(repo.commits[0]);
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toContain('# review a');
    const unknown = repo.commits.some((c) => c.startsWith('0000')) ? 'ffff' : '0000';
    await expect(prepareSkills([`${url}@${unknown}abc#skills/review`], { cache, sandbox })).rejects.toMatchObject({
      code: 'SKILL_NOT_FOUND',
    });
  });

  it('a branch that moved without touching the skill: a new version, the same content id, a hit that fetches no file', async () => {
    // Large skill files: had any been fetched again, the bytes served would show it.
    const big = randomBytes(300_000).toString('base64');
    const { repo, server, url } = await servedRepo({
      commits: [{ branch: 'main', files: { ...skillFiles('x'), 'skills/review/data.txt': big } }],
    });
    const { sandbox } = await recordingSandbox();
    const cache = await newCache();
    const entry = [{ provider: 'git', source: url, version: 'main', path: 'skills/review', name: 'review' }];
    const [first] = await prepareSkills(entry, { cache, sandbox });
    // Move main with a commit outside the skill.
    await repo.git('update-ref', 'refs/heads/main', await moveBranch(repo.path, 'main'));
    server.resetStats();
    const [second] = await prepareSkills(entry, { cache, sandbox });
    expect(second!.version).not.toBe(first!.version);
    expect(second!.contentId).toBe(first!.contentId);
    expect(second!.hit).toBe(true);
    expect(server.stats.bytesServed).toBeLessThan(20_000);
    expect(await readFile(join(second!.dir, 'data.txt'), 'utf8')).toBe(big);
  });

  it('authorizes on every preparation: a hit still lists refs, and a revoked credential fails even when cached', async () => {
    let password = 'right-password';
    const { server, url } = await servedRepo(
      { commits: [{ files: skillFiles('p') }] },
      { auth: (user, pass) => user === 'bot' && pass === password },
    );
    const { sandbox } = await recordingSandbox();
    const cache = await newCache();
    const vault: BasicVault = () => ({ username: 'bot', password: 'right-password' });
    const entry = [`${url}#skills/review`];
    expect((await prepareSkills(entry, { cache, sandbox, vault }))[0]!.hit).toBe(false);
    server.resetStats();
    expect((await prepareSkills(entry, { cache, sandbox, vault }))[0]!.hit).toBe(true);
    expect(server.stats.requests).toBeGreaterThan(0);
    password = 'rotated';
    await expect(prepareSkills(entry, { cache, sandbox, vault })).rejects.toMatchObject({
      code: 'SKILL_AUTH_FAILED',
      phase: 'resolve',
    });
  });

  it.each([
    ['a wrong password', () => ({ username: 'bot', password: 'wrong-password' })],
    ['no credential', () => undefined],
  ])('refuses %s with SKILL_AUTH_FAILED and publishes nothing', async (_name, vault) => {
    const { url } = await servedRepo(
      { commits: [{ files: skillFiles('p') }] },
      { auth: { username: 'bot', password: 'right-password' } },
    );
    const { sandbox, privateRoot } = await recordingSandbox();
    const cache = await newCache();
    await expect(prepareSkills([`${url}#skills/review`], { cache, sandbox, vault })).rejects.toMatchObject({
      code: 'SKILL_AUTH_FAILED',
    });
    expect((await cache.list()).objects).toEqual([]);
    expect(await readdir(privateRoot)).toEqual([]);
  });

  it("never lets the Basic password show: not in any command line or environment (also of git's own children), error, result, store or private folder", async () => {
    const canary = `canary-${randomBytes(12).toString('hex')}`;
    const { url } = await servedRepo(
      { commits: [{ files: skillFiles('c') }] },
      { auth: { username: 'bot', password: canary } },
    );
    const { sandbox, runs, privateRoot } = await recordingSandbox();
    const cache = await newCache();
    const basic = Buffer.from(`bot:${canary}`).toString('base64');
    const watch = watchProc([canary, basic]);
    const prepared = await prepareSkills([`${url}#skills/review`], {
      cache,
      sandbox,
      vault: () => ({ username: 'bot', password: canary }),
    });
    const failure = await prepareSkills([`${url}#skills/review`], {
      cache: await newCache(),
      sandbox,
      vault: () => ({ username: 'bot', password: `${canary}-x` }),
    }).catch((e: unknown) => e);
    const seen = await watch.stop();
    expect(seen.scans).toBeGreaterThan(0);
    expect(seen.hits).toEqual([]);
    expect(failure).toMatchObject({ code: 'SKILL_AUTH_FAILED' });
    const texts = [
      ...renderings(failure),
      JSON.stringify(prepared),
      ...runs.flatMap((run) => [...run.argv, ...Object.values(run.env)]),
      ...(await everyFileText(cache.root)),
    ];
    for (const text of texts) {
      expect(text).not.toContain(canary);
      expect(text).not.toContain(basic);
    }
    // The packs came in-process (the sandbox runs on this machine) and git indexed them:
    // the header lived in this process only, and no command ever held it.
    expect(runs.some((run) => gitSubcommand(run.argv) === 'index-pack')).toBe(true);
    expect(runs.some((run) => gitSubcommand(run.argv) === 'fetch')).toBe(false);
    expect(await readdir(privateRoot)).toEqual([]);
  });

  it('keeps links inside the selected directory and refuses one that leaves it', async () => {
    const { url } = await servedRepo({
      commits: [
        {
          files: {
            ...skillFiles('l'),
            'skills/review/guide': { symlink: 'docs/guide.md' },
            'skills/other/SKILL.md': '# other\n',
            'skills/other/escape': { symlink: '../review/docs/guide.md' },
          },
        },
      ],
    });
    const { sandbox } = await recordingSandbox();
    const cache = await newCache();
    const [skill] = await prepareSkills([`${url}#skills/review`], { cache, sandbox });
    expect(await readlink(join(skill!.dir, 'guide'))).toBe('docs/guide.md');
    const failure = await prepareSkills([`${url}#skills/other`], { cache, sandbox }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'SKILL_UNSAFE_TREE', entry: { name: 'other' } });
    expect((await cache.list()).objects).toHaveLength(1);
  });

  it('refuses a directory without SKILL.md, and a directory that is not there', async () => {
    const { url } = await servedRepo({
      commits: [{ files: { ...skillFiles('m'), 'skills/empty/README.md': 'no skill\n' } }],
    });
    const { sandbox } = await recordingSandbox();
    const cache = await newCache();
    await expect(prepareSkills([`${url}#skills/empty`], { cache, sandbox })).rejects.toMatchObject({
      code: 'SKILL_MD_MISSING',
      entry: { name: 'empty' },
    });
    await expect(prepareSkills([`${url}#skills/absent`], { cache, sandbox })).rejects.toMatchObject({
      code: 'SKILL_NOT_FOUND',
      entry: { name: 'absent' },
    });
    expect((await cache.list()).objects).toEqual([]);
  });

  it('fetches with isomorphic-git when the sandbox has no git binary', async () => {
    const { repo, url } = await servedRepo({ commits: [{ files: skillFiles('iso') }] });
    const { sandbox, runs } = await recordingSandbox({ capabilities: { git: false, ssh: false } });
    const [skill] = await prepareSkills([`${url}#skills/review`], { cache: await newCache(), sandbox });
    expect(skill!.contentId).toBe(await repo.treeOf(0, 'skills/review'));
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toContain('# review iso');
    expect(runs).toEqual([]);
  });

  it('a new store (a replaced sandbox) fetches again through the same declaration and authorization', async () => {
    const { server, url } = await servedRepo(
      { commits: [{ files: skillFiles('n') }] },
      { auth: { username: 'bot', password: 'pw-1234' } },
    );
    const { sandbox } = await recordingSandbox();
    const asked: string[] = [];
    const vault: BasicVault = (vaultUrl) => {
      asked.push(vaultUrl);
      return { username: 'bot', password: 'pw-1234' };
    };
    const [first] = await prepareSkills([`${url}#skills/review`], { cache: await newCache(), sandbox, vault });
    const askedFirst = asked.length;
    server.resetStats();
    const [again] = await prepareSkills([`${url}#skills/review`], { cache: await newCache(), sandbox, vault });
    expect(again).toMatchObject({ hit: false, version: first!.version, contentId: first!.contentId });
    // The same path again: the vault asked for the same URL, and the server sent the files.
    expect(asked.slice(askedFirst)).toEqual(asked.slice(0, askedFirst));
    expect(asked[0]).toBe(url);
    expect(
      server.stats.log.filter((entry) => entry.method === 'POST' && entry.status === 200).length,
    ).toBeGreaterThanOrEqual(3);
  });

  it.each([
    ['resolution, while asking the vault', 'vault'],
    // The first pack indexed holds the commit and the trees, the second the files.
    ['resolution, while fetching the trees', 'index-pack #1'],
    ['the fetch of the files', 'index-pack #2'],
  ])('cancelled during %s: SKILL_ABORTED, nothing published, no private folder left', async (_phase, at) => {
    const { url } = await servedRepo({ commits: [{ files: skillFiles('c') }] });
    const recording = await recordingSandbox();
    const controller = new AbortController();
    const cancel = () => controller.abort(new Error('cancelled'));
    let indexed = 0;
    recording.onRun((argv) => {
      const command = gitSubcommand(argv);
      if (command === 'index-pack') indexed += 1;
      if (at === command || (command === 'index-pack' && at === `index-pack #${indexed}`)) cancel();
    });
    const vault: BasicVault = () => {
      if (at === 'vault') cancel();
      return undefined;
    };
    const cache = await newCache();
    await expect(
      prepareSkills([`${url}#skills/review`], { cache, sandbox: recording.sandbox, signal: controller.signal, vault }),
    ).rejects.toMatchObject({
      code: 'SKILL_ABORTED',
    });
    expect(controller.signal.aborted).toBe(true);
    expect((await cache.list()).objects).toEqual([]);
    expect(await readdir(recording.privateRoot)).toEqual([]);
    expect(await readdir(join(cache.root, 'staging'))).toEqual([]);
  });
});

/** A commit on `branch` that adds a file outside the skill; returns its id. */
async function moveBranch(gitdir: string, branch: string): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_DIR: gitdir,
  };
  const git = (args: string[], input?: string) => execFileSync('git', args, { env, input }).toString().trim();
  const blob = git(['hash-object', '-w', '--stdin'], 'elsewhere\n');
  const tree = git(['mktree'], `${git(['ls-tree', branch])}\n100644 blob ${blob}\tNOTES.md\n`);
  return git(
    ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit-tree', tree, '-p', branch, '-m', 'notes'],
    '',
  );
}
