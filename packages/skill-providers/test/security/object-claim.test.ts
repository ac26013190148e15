import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';
import {
  type GitHttpServer,
  type MadeRepo,
  type TempDir,
  makeRepo,
  startGitHttpServer,
  tempDir as sharedDir,
} from '@agentproto/testkit';
import { type BasicVault, localSandbox, prepareSkills } from '@agentproto/skill-providers';
import { tempDir } from '../support/temp.js';

const run = promisify(execFile);
const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
  GIT_AUTHOR_NAME: 'a',
  GIT_AUTHOR_EMAIL: 'a@example.test',
  GIT_COMMITTER_NAME: 'a',
  GIT_COMMITTER_EMAIL: 'a@example.test',
};
const git = async (gitdir: string, args: string[], input?: string) => {
  const child = run('git', [`--git-dir=${gitdir}`, ...args], { env: gitEnv });
  if (input !== undefined) child.child.stdin!.end(input);
  return (await child).stdout.trim();
};

// One store shared by two tenants (a host serving several customers). The victim's skill
// lives in a private repository; the attacker knows its tree id and the tree object (names
// and blob ids, e.g. from a leaked listing), not the files. Its own repository holds a
// commit whose skill directory is that very tree object, without any blob.
let served: TempDir;
let server: GitHttpServer;
let victimRepo: MadeRepo;
const SECRET = '---\nname: secret\n---\nthe private playbook\n';

beforeAll(async () => {
  served = await sharedDir();
  victimRepo = await makeRepo({
    root: served.path,
    name: 'victim/private.git',
    commits: [
      { files: { 'skills/secret/SKILL.md': SECRET, 'skills/secret/notes.md': 'internal\n', 'README.md': 'v1\n' } },
      { files: { 'README.md': 'v2\n' } },
    ],
    branches: [{ name: 'moving', from: 0 }],
  });
  const attacker = await makeRepo({
    root: served.path,
    name: 'attacker/public.git',
    commits: [{ files: { 'README.md': 'hi\n' } }],
  });
  // The attacker's commit: skills/secret is the victim's tree object, copied byte for byte;
  // its blobs are nowhere in the attacker's repository.
  const victimDir = join(served.path, 'victim/private.git');
  const secretTree = await git(victimDir, ['rev-parse', `${victimRepo.commits[0]}:skills/secret`]);
  const listing = await git(victimDir, ['ls-tree', secretTree]);
  const attackerDir = join(served.path, 'attacker/public.git');
  const copied = await git(attackerDir, ['mktree', '--missing'], `${listing}\n`);
  expect(copied).toBe(secretTree);
  const skillsTree = await git(attackerDir, ['mktree', '--missing'], `040000 tree ${secretTree}\tsecret\n`);
  const root = await git(attackerDir, ['mktree', '--missing'], `040000 tree ${skillsTree}\tskills\n`);
  const commit = await git(attackerDir, ['commit-tree', root, '-p', attacker.commits[0]!, '-m', 'claim']);
  await git(attackerDir, ['update-ref', 'refs/heads/main', commit]);
  server = await startGitHttpServer({
    root: served.path,
    auth: (user, password) =>
      (user === 'victim' && password === 'victim-pw') || (user === 'attacker' && password === 'attacker-pw'),
  });
});

afterAll(async () => {
  await server?.close();
  await served?.cleanup();
});

const asVictim: BasicVault = (url) =>
  url.includes('/victim/') ? { username: 'victim', password: 'victim-pw' } : undefined;
const asAttacker: BasicVault = () => ({ username: 'attacker', password: 'attacker-pw' });

describe('objects are shared only within the source that proved it can obtain them', () => {
  it("never hands a private skill to another repository whose tree object claims the victim's tree id", async () => {
    const store = await openContentStore({ root: join(await tempDir(), 'store') });
    const sandbox = localSandbox({ privateRoot: await tempDir() });
    const [victim] = await prepareSkills([`${server.urlFor('victim/private.git')}@moving#skills/secret`], {
      cache: store,
      sandbox,
      vault: asVictim,
    });
    expect(await readFile(join(victim!.dir, 'SKILL.md'), 'utf8')).toBe(SECRET);

    const attempt = prepareSkills([`${server.urlFor('attacker/public.git')}@main#skills/secret`], {
      cache: store,
      sandbox,
      vault: asAttacker,
    });
    // Its resolution names the same content id, but the content is not the attacker's to
    // take: the fetch from its own repository fails for lack of the blobs.
    await expect(attempt).rejects.toMatchObject({ phase: 'fetch' });
    const links = (await store.list()).links;
    expect(links).toHaveLength(1);
  });

  it('still serves a branch that moved without touching the skill from the store, fetching no file content', async () => {
    const store = await openContentStore({ root: join(await tempDir(), 'store') });
    const sandbox = localSandbox({ privateRoot: await tempDir() });
    const entry = [`${server.urlFor('victim/private.git')}@moving#skills/secret`];
    const victimDir = join(served.path, 'victim/private.git');
    await git(victimDir, ['update-ref', 'refs/heads/moving', victimRepo.commits[0]!]);
    const [first] = await prepareSkills(entry, { cache: store, sandbox, vault: asVictim });
    expect(first).toMatchObject({ from: 'origin', version: victimRepo.commits[0] });

    await git(victimDir, ['update-ref', 'refs/heads/moving', victimRepo.commits[1]!]);
    server.resetStats();
    const [moved] = await prepareSkills(entry, { cache: store, sandbox, vault: asVictim });
    expect(moved).toMatchObject({
      from: 'store',
      hit: true,
      version: victimRepo.commits[1],
      contentId: first!.contentId,
    });
    const fetches = server.stats.log.filter((r) => r.method === 'POST' && r.command === 'fetch');
    expect(fetches.map((r) => r.filter)).toEqual(['combine:blob:none+tree:2']);
  });
});
