import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type GitHttpServer, makeRepo, startGitHttpServer } from '@agentproto/testkit';
import { basicVault } from '../../src/vault.js';
import { run } from '../support/run.js';
import { scratchFolders } from '../support/scratch.js';

const scratch = scratchFolders();
const servers: GitHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const env = { TEAM_PW: 'team-secret', SUB_PW: 'sub-secret', OTHER_PW: 'other-secret' };
const vault = basicVault(
  {
    'https://git.example.com/team': { username: 'team-bot', passwordEnv: 'TEAM_PW' },
    'https://git.example.com/team/sub/': { username: 'sub-bot', passwordEnv: 'SUB_PW' },
    'https://other.example.com/': { username: 'other-bot', passwordEnv: 'OTHER_PW' },
  },
  env,
);

describe('the --vault scope is matched on the path a server decodes', () => {
  it.each([
    ['https://git.example.com/team', 'team-bot'],
    ['https://git.example.com/team/skills.git', 'team-bot'],
    ['https://git.example.com/team/a/b/skills.git', 'team-bot'],
    ['https://git.example.com/%74eam/skills.git', 'team-bot'],
    ['https://GIT.example.com:443/team/skills.git', 'team-bot'],
    ['https://git.example.com/team//skills.git', 'team-bot'],
    ['https://git.example.com/team/sub/skills.git', 'sub-bot'],
    ['https://git.example.com/team/s%75b/skills.git', 'sub-bot'],
    ['https://other.example.com/anything.git', 'other-bot'],
    ['https://git.example.com/teammates/skills.git', undefined],
    ['https://git.example.com/Team/skills.git', undefined],
    ['https://git.example.com/other-org/skills.git', undefined],
    ['http://git.example.com/team/skills.git', undefined],
    ['https://git.example.com:8443/team/skills.git', undefined],
    ['https://evil.example.com/team/skills.git', undefined],
    ['https://git.example.com.evil.example/team/skills.git', undefined],
  ])('%s gets the credential of %s', async (url, username) => {
    expect((await vault(url))?.username).toBe(username);
  });

  it.each([
    ['https://git.example.com/team/..%2fother-org/skills.git', 'an encoded /'],
    ['https://git.example.com/team/..%2Fother-org/skills.git', 'an encoded / in upper case'],
    ['https://git.example.com/team/..%5cother-org/skills.git', 'an encoded \\'],
    ['https://git.example.com/team/%2e%2e/other-org/skills.git', 'an encoded .. segment'],
    ['https://git.example.com/team/.%2e/other-org/skills.git', 'a half-encoded .. segment'],
    ['https://git.example.com/team/%252e%252e%252fother-org/skills.git', 'a doubly encoded ../'],
    ['https://git.example.com/team/../other-org/skills.git', 'a plain .. segment'],
    ['https://git.example.com/team/./skills.git', 'a plain . segment'],
    ['https://git.example.com/team\\..\\other-org/skills.git', 'backslashes'],
    ['https://git.example.com/team/%00/skills.git', 'an encoded NUL'],
    ['https://git.example.com/team/%zz/skills.git', 'a malformed escape'],
    ['https://bot:pw@git.example.com/team/skills.git', 'credentials in the URL'],
    ['ssh://git.example.com/team/skills.git', 'another scheme'],
  ])('refuses %s (%s) instead of matching it', async (url) => {
    await expect(async () => vault(url)).rejects.toMatchObject({ code: 'VAULT_URL_REFUSED' });
  });

  it.each([
    ['https://git.example.com/team/..%2fother-org'],
    ['https://git.example.com/team/../other-org'],
    ['git.example.com/team'],
  ])('refuses a vault whose prefix %s is not a plain http(s) scope', (prefix) => {
    expect(() => basicVault({ [prefix]: { username: 'x', passwordEnv: 'TEAM_PW' } }, env)).toThrow(/is refused/);
  });

  it('agentproto skills resolve never sends the /team credential for /team/..%2fother-org/…', async () => {
    const root = await scratch();
    for (const org of ['team', 'other-org']) {
      await makeRepo({ root, name: `${org}/skills.git`, commits: [{ files: { 'skills/a/SKILL.md': '# a\n' } }] });
    }
    const seen: string[] = [];
    const server = await startGitHttpServer({
      root,
      auth: (username, password) => {
        seen.push(`${username}:${password}`);
        return username === 'team-bot' && password === 'team-secret-7731';
      },
    });
    servers.push(server);
    const dir = await scratch();
    const vaultPath = join(dir, 'vault.json');
    await writeFile(
      vaultPath,
      JSON.stringify({ [`${server.url}/team`]: { username: 'team-bot', passwordEnv: 'AGENTPROTO_VAULT_SCOPE_PW' } }),
    );
    process.env.AGENTPROTO_VAULT_SCOPE_PW = 'team-secret-7731';
    try {
      // In scope: the credential is sent and accepted.
      const inside = join(dir, 'inside.json');
      await writeFile(inside, JSON.stringify([`${server.url}/team/skills.git#skills/a`]));
      const ok = await run([
        'skills',
        'resolve',
        inside,
        '--store',
        join(dir, 'cache'),
        '--vault',
        vaultPath,
        '--json',
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(seen.length).toBeGreaterThan(0);
      seen.length = 0;
      server.resetStats();

      for (const spelling of ['..%2fother-org', '..%2Fother-org', '%2e%2e/other-org', '..%5cother-org']) {
        const declaration = join(dir, 'outside.json');
        await writeFile(
          declaration,
          JSON.stringify([
            {
              provider: 'git',
              source: `${server.url}/team/${spelling}/skills.git`,
              version: 'main',
              path: 'skills/a',
              name: 'a',
            },
          ]),
        );
        const outcome = await run([
          'skills',
          'resolve',
          declaration,
          '--store',
          join(dir, 'cache'),
          '--vault',
          vaultPath,
        ]);
        expect(outcome.code, spelling).not.toBe(0);
        expect(outcome.stderr).not.toContain('team-secret-7731');
      }
      expect(seen).toEqual([]);
      expect(server.stats.requests).toBe(0);
    } finally {
      delete process.env.AGENTPROTO_VAULT_SCOPE_PW;
    }
  });
});
