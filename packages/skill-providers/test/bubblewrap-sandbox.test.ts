import { randomBytes } from 'node:crypto';
import { readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateSshKey, makeRepo, startGitHttpServer, startGitSshServer } from '@agentproto/testkit';
import {
  type BubblewrapSandbox,
  bubblewrapSandbox,
  createRegistry,
  gitProvider,
  localSandbox,
  prepareSkills,
} from '@agentproto/skill-providers';
import { newCache } from './support/skills.js';
import { tempDir } from './support/temp.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One repository served over smart HTTP with Basic auth and over SSH with a deploy key. */
async function servers() {
  const root = await tempDir();
  await makeRepo({
    root,
    name: 'skills.git',
    commits: [
      {
        files: {
          'skills/deploy/SKILL.md': '# deploy\n',
          'skills/deploy/run.sh': { content: 'echo deploy\n', executable: true },
          'skills/other/SKILL.md': '# other\n',
        },
      },
    ],
  });
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const http = await startGitHttpServer({ root, auth: { username: 'bot', password } });
  const key = await generateSshKey({ dir: await tempDir(), name: 'deploy' });
  const ssh = await startGitSshServer({ root, authorizedKeys: [key.publicKey] });
  cleanups.push(
    () => http.close(),
    () => ssh.close(),
  );
  const privateKey = await readFile(key.privateKey, 'utf8');
  return {
    http,
    ssh,
    password,
    privateKey,
    registry: createRegistry([gitProvider({ deployKeySecretNames: ['skills-read-key'] })]),
    httpEntry: {
      provider: 'git',
      source: http.urlFor('skills.git'),
      version: 'main',
      path: 'skills/deploy',
      name: 'h',
    },
    sshEntry: {
      provider: 'git',
      source: ssh.urlFor('skills.git'),
      version: 'main',
      path: 'skills/deploy',
      name: 's',
      config: { deploy_key_secret_name: 'skills-read-key', known_hosts: ssh.knownHostsLine },
    },
  };
}

async function sandboxIn(): Promise<{ sandbox: BubblewrapSandbox; privateRoot: string }> {
  const privateRoot = await tempDir();
  const sandbox = bubblewrapSandbox({ privateRoot });
  cleanups.push(() => sandbox.close());
  return { sandbox, privateRoot };
}

describe('bubblewrapSandbox', () => {
  it('says what it can do: git, ssh and https, never in-process', async () => {
    const { sandbox } = await sandboxIn();
    expect(sandbox.name).toBe('bubblewrap');
    expect(sandbox.capabilities).toEqual({ git: true, ssh: true, https: true, inProcess: false });
    expect(bubblewrapSandbox({ capabilities: { ssh: false } }).capabilities.ssh).toBe(false);
  });

  it('cannot be made where it cannot isolate: a typed error naming what is missing, never a sandbox without isolation', async () => {
    const unavailable = (missing: string) => ({ code: 'SKILL_SANDBOX_UNAVAILABLE', missing, sandbox: 'bubblewrap' });
    const only = async (programs: Record<string, string>) => {
      const dir = await tempDir();
      for (const [program, target] of Object.entries(programs)) await symlink(target, join(dir, program));
      return dir;
    };
    const empty = await only({});
    expect(() => bubblewrapSandbox({ path: empty })).toThrow(expect.objectContaining(unavailable('bubblewrap')));
    const noSocat = await only({ bwrap: '/usr/bin/bwrap' });
    expect(() => bubblewrapSandbox({ path: noSocat })).toThrow(expect.objectContaining(unavailable('socat')));
    // git installed outside the folders the sandbox shows (here a wrapper in a temp folder) is no git there.
    const copied = await only({ bwrap: '/usr/bin/bwrap', socat: '/usr/bin/socat' });
    await writeFile(join(copied, 'git'), '#!/bin/sh\nexec /usr/bin/git "$@"\n', { mode: 0o755 });
    expect(() => bubblewrapSandbox({ path: copied })).toThrow(expect.objectContaining(unavailable('git')));
    // A kernel that refuses the namespaces: security/bubblewrap-namespaces-refused.test.ts (a real refusal).
  });

  it('prepares over HTTP Basic and over SSH with a deploy key: the same content ids as localSandbox', async () => {
    const s = await servers();
    const { sandbox, privateRoot } = await sandboxIn();
    const options = {
      registry: s.registry,
      vault: () => ({ username: 'bot', password: s.password }),
      secrets: () => s.privateKey,
    };
    const cache = await newCache();
    const isolated = await prepareSkills([s.httpEntry, s.sshEntry], { ...options, cache, sandbox });
    const local = await prepareSkills([s.httpEntry, s.sshEntry], {
      ...options,
      cache: await newCache(),
      sandbox: localSandbox({ privateRoot: await tempDir() }),
    });
    expect(isolated.map((skill) => skill.contentId)).toEqual(local.map((skill) => skill.contentId));
    expect(isolated.map((skill) => skill.version)).toEqual(local.map((skill) => skill.version));
    for (const skill of isolated) expect(await readFile(join(skill.dir, 'SKILL.md'), 'utf8')).toBe('# deploy\n');
    // Both went through the network boundary, which granted exactly the servers and refused nothing.
    expect(sandbox.refusedEgress).toEqual([]);
    expect(s.http.stats.log.some((entry) => entry.status === 200)).toBe(true);
    expect(await readdir(privateRoot)).toEqual([]);
    // Again: a hit for both, each authorized by a ref listing that ran in the sandbox.
    const again = await prepareSkills([s.httpEntry, s.sshEntry], { ...options, cache, sandbox });
    expect(again.map((skill) => [skill.hit, skill.from])).toEqual([
      [true, 'store'],
      [true, 'store'],
    ]);
    expect(await readdir(privateRoot)).toEqual([]);
  }, 90_000);
});
