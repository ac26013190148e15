import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type GitHttpServer, makeRepo, startGitHttpServer } from '@agentproto/testkit';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();
const servers: GitHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function served(auth?: { username: string; password: string }) {
  const root = await scratch();
  const repo = await makeRepo({
    root,
    name: 'skills.git',
    commits: [
      {
        files: {
          'skills/review/SKILL.md': '# review\n',
          'skills/review/guide.md': 'guide\n',
          'skills/lint/SKILL.md': '# lint\n',
        },
      },
    ],
    tags: [{ name: 'v1', target: 0 }],
  });
  const server = await startGitHttpServer({ root, ...(auth ? { auth } : {}) });
  servers.push(server);
  return { repo, url: server.urlFor('skills.git') };
}

describe('agentproto skills', () => {
  it('prepare fetches each skill and prints its directory, with no progress under --json; a second run is cached', async () => {
    const { repo, url } = await served();
    const dir = await scratch();
    const declaration = join(dir, 'skills.yaml');
    await writeFile(
      declaration,
      `skills:\n  - ${url}@v1#skills/review\n  - { provider: git, source: ${url}, version: v1, path: skills/lint, name: lint }\n`,
    );
    const first = await run(['skills', 'prepare', declaration, '--store', join(dir, 'cache'), '--json']);
    expect(first.code).toBe(0);
    const prepared = JSON.parse(first.stdout) as Array<{ name: string; dir: string; version: string; hit: boolean }>;
    expect(prepared.map((p) => [p.name, p.version, p.hit])).toEqual([
      ['review', repo.commits[0], false],
      ['lint', repo.commits[0], false],
    ]);
    expect(await readFile(join(prepared[0]!.dir, 'guide.md'), 'utf8')).toBe('guide\n');
    // --json: stderr holds warnings and errors only, no progress.
    expect(first.stderr).toBe('');

    const second = await run(['skills', 'prepare', declaration, '--store', join(dir, 'cache')]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('(cached)');
    expect(second.stderr).toBe('');
  });

  it('resolve pins every entry without fetching and says which are cached', async () => {
    const { repo, url } = await served();
    const dir = await scratch();
    const declaration = join(dir, 'skills.json');
    await writeFile(declaration, JSON.stringify([`${url}@v1#skills/review`]));
    const outcome = await run(['skills', 'resolve', declaration, '--store', join(dir, 'cache'), '--json']);
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toEqual([
      {
        name: 'review',
        provider: 'git',
        version: repo.commits[0],
        contentId: await repo.treeOf(0, 'skills/review'),
        cached: false,
        egressHosts: [new URL(url).host],
      },
    ]);
    expect(outcome.stderr).toBe('');
  });

  it('reads HTTP Basic credentials through --vault, the password from the variable it names; never prints it', async () => {
    const password = 'canary-vault-password-7781';
    const { url } = await served({ username: 'bot', password });
    const dir = await scratch();
    const declaration = join(dir, 'skills.json');
    await writeFile(declaration, JSON.stringify([`${url}#skills/review`]));
    const vault = join(dir, 'vault.json');
    await writeFile(
      vault,
      JSON.stringify({
        [url.replace(/\/skills\.git$/, '')]: { username: 'bot', passwordEnv: 'AGENTPROTO_TEST_GIT_PASSWORD' },
      }),
    );
    process.env.AGENTPROTO_TEST_GIT_PASSWORD = password;
    try {
      const ok = await run(['skills', 'prepare', declaration, '--store', join(dir, 'cache'), '--vault', vault]);
      expect(ok.code).toBe(0);
      process.env.AGENTPROTO_TEST_GIT_PASSWORD = `${password}-wrong`;
      const refused = await run(['skills', 'prepare', declaration, '--store', join(dir, 'cache'), '--vault', vault]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^agentproto: SKILL_AUTH_FAILED: skill #0 "review"/);
      for (const text of [ok.stdout, ok.stderr, refused.stdout, refused.stderr]) expect(text).not.toContain(password);
    } finally {
      delete process.env.AGENTPROTO_TEST_GIT_PASSWORD;
    }
  });

  it('exits 1 with the stable code naming the entry: an unknown provider, a bad entry', async () => {
    const dir = await scratch();
    const declaration = join(dir, 'skills.json');
    await writeFile(declaration, JSON.stringify([{ provider: 'svn', source: 'x', version: '1', name: 'a' }]));
    const unknown = await run(['skills', 'prepare', declaration, '--store', join(dir, 'cache')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('SKILL_PROVIDER_UNKNOWN');
    expect(unknown.stderr).toContain('known providers: git');
    await writeFile(declaration, JSON.stringify(['https://user:secret-pw@example.com/r.git#skills/a']));
    const bad = await run(['skills', 'resolve', declaration, '--store', join(dir, 'cache')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('SKILL_URL_HAS_CREDENTIALS');
    expect(bad.stderr).not.toContain('secret-pw');
  });

  it('wrong command lines exit 2', async () => {
    expect((await run(['skills'])).code).toBe(2);
    expect((await run(['skills', 'install', 'x.json'])).code).toBe(2);
    expect((await run(['skills', 'prepare'])).code).toBe(2);
  });
});
