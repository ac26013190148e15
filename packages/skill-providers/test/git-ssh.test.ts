import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  generateSshKey,
  makeRepo,
  renderings,
  startGitSshServer,
  type GitSshServer,
  type SshKeyPair,
  watchProc,
} from '@agentproto/testkit';
import { gitProvider, createRegistry, prepareSkills, type SecretReader } from '@agentproto/skill-providers';
import { everyFileText, gitSubcommand, recordingSandbox } from './support/git.js';
import { newCache } from './support/skills.js';
import { tempDir } from './support/temp.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  server: GitSshServer;
  key: SshKeyPair;
  wrongKey: SshKeyPair;
  privateKey: string;
  url: string;
  knownHosts: string;
  registry: ReturnType<typeof createRegistry>;
}

async function setup(): Promise<Setup> {
  const root = await tempDir();
  await makeRepo({
    root,
    name: 'skills.git',
    commits: [
      {
        files: {
          'skills/deploy/SKILL.md': '# deploy\n',
          'skills/deploy/run.sh': { content: 'echo\n', executable: true },
        },
      },
    ],
  });
  const keys = await tempDir();
  const key = await generateSshKey({ dir: keys, name: 'deploy' });
  const wrongKey = await generateSshKey({ dir: keys, name: 'wrong' });
  const server = await startGitSshServer({ root, authorizedKeys: [key.publicKey] });
  cleanups.push(() => server.close());
  return {
    server,
    key,
    wrongKey,
    privateKey: await readFile(key.privateKey, 'utf8'),
    url: server.urlFor('skills.git'),
    knownHosts: server.knownHostsLine,
    registry: createRegistry([gitProvider({ deployKeySecretNames: ['skills-read-key'] })]),
  };
}

const entryFor = (s: Pick<Setup, 'url' | 'knownHosts'>, config: Record<string, unknown> = {}) => ({
  provider: 'git',
  source: s.url,
  version: 'HEAD',
  path: 'skills/deploy',
  name: 'deploy',
  config: { deploy_key_secret_name: 'skills-read-key', known_hosts: s.knownHosts, ...config },
});

describe('the git provider over SSH', () => {
  it('prepares with the deploy key and the pinned host key, on a nonstandard port ([host]:port form)', async () => {
    const s = await setup();
    expect(s.knownHosts.startsWith(`[127.0.0.1]:${s.server.port} `)).toBe(true);
    const { sandbox, privateRoot, written } = await recordingSandbox();
    const [skill] = await prepareSkills([entryFor(s)], {
      cache: await newCache(),
      sandbox,
      registry: s.registry,
      secrets: () => s.privateKey,
    });
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toBe('# deploy\n');
    // Key and known_hosts went through the sandbox's file API into the private folder, and are gone.
    expect(written.some((path) => path.startsWith(privateRoot) && path.endsWith('deploy-key'))).toBe(true);
    expect(await readdir(privateRoot)).toEqual([]);
  });

  it('refuses a key the server does not accept', async () => {
    const s = await setup();
    const { sandbox } = await recordingSandbox();
    const wrong = await readFile(s.wrongKey.privateKey, 'utf8');
    await expect(
      prepareSkills([entryFor(s)], { cache: await newCache(), sandbox, registry: s.registry, secrets: () => wrong }),
    ).rejects.toMatchObject({
      code: 'SKILL_AUTH_FAILED',
      reason: 'GIT_AUTH_FAILED',
    });
  });

  it('refuses a server whose host key is not the pinned one', async () => {
    const s = await setup();
    const other = await generateSshKey({ dir: await tempDir(), name: 'other' });
    const [type, body] = other.publicKey.split(/\s+/);
    const { sandbox } = await recordingSandbox();
    await expect(
      prepareSkills([entryFor(s, { known_hosts: `[127.0.0.1]:${s.server.port} ${type} ${body}` })], {
        cache: await newCache(),
        sandbox,
        registry: s.registry,
        secrets: () => s.privateKey,
      }),
    ).rejects.toMatchObject({ code: 'SKILL_AUTH_FAILED', reason: 'GIT_HOST_KEY' });
  });

  it('never uses an ssh-agent: an agent holding the valid key does not rescue a wrong deploy key', async () => {
    const s = await setup();
    const socket = await startAgent(s.key);
    const saved = process.env.SSH_AUTH_SOCK;
    process.env.SSH_AUTH_SOCK = socket;
    cleanups.push(async () => {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
    });
    const { sandbox, runs } = await recordingSandbox();
    const wrong = await readFile(s.wrongKey.privateKey, 'utf8');
    await expect(
      prepareSkills([entryFor(s)], { cache: await newCache(), sandbox, registry: s.registry, secrets: () => wrong }),
    ).rejects.toMatchObject({
      code: 'SKILL_AUTH_FAILED',
    });
    for (const run of runs) expect(run.env.SSH_AUTH_SOCK).toBeUndefined();
  });

  it("ignores the account's ~/.ssh/config, even one that would send the host elsewhere", async () => {
    const s = await setup();
    // A config ssh would really read, for the host name `localhost`, which no other test uses.
    await installAmbientSshConfig(
      'Host localhost\n  HostName 192.0.2.1\n  Port 9\n  ConnectTimeout 2\n  User nobody\n',
    );
    const url = s.url.replace('@127.0.0.1:', '@localhost:');
    const knownHosts = s.knownHosts.replace('[127.0.0.1]', '[localhost]');
    const { sandbox } = await recordingSandbox();
    const [skill] = await prepareSkills([entryFor({ url, knownHosts })], {
      cache: await newCache(),
      sandbox,
      registry: s.registry,
      secrets: () => s.privateKey,
    });
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toBe('# deploy\n');
  });

  it('an HTTPS-only sandbox refuses an SSH source: no command runs and no secret is read', async () => {
    const s = await setup();
    const { sandbox, runs } = await recordingSandbox({ capabilities: { ssh: false } });
    const reads: string[] = [];
    const secrets: SecretReader = (name) => {
      reads.push(name);
      return s.privateKey;
    };
    await expect(
      prepareSkills([entryFor(s)], { cache: await newCache(), sandbox, registry: s.registry, secrets }),
    ).rejects.toMatchObject({
      code: 'SKILL_TRANSPORT_UNSUPPORTED',
    });
    expect(runs).toEqual([]);
    expect(reads).toEqual([]);
  });

  it('checks the allowlist before the secret is read, and requires both SSH options', async () => {
    const s = await setup();
    const { sandbox } = await recordingSandbox();
    const reads: string[] = [];
    const secrets: SecretReader = (name) => {
      reads.push(name);
      return s.privateKey;
    };
    const options = { cache: await newCache(), sandbox, registry: s.registry, secrets };
    await expect(
      prepareSkills([entryFor(s, { deploy_key_secret_name: 'prod-admin-key' })], options),
    ).rejects.toMatchObject({
      code: 'SKILL_CREDENTIAL_NOT_APPROVED',
      entry: { name: 'deploy' },
    });
    const noKnownHosts = entryFor(s);
    delete (noKnownHosts.config as Record<string, unknown>).known_hosts;
    await expect(prepareSkills([noKnownHosts], options)).rejects.toMatchObject({ code: 'SKILL_CONFIG_INVALID' });
    await expect(
      prepareSkills([entryFor(s, { known_hosts: `127.0.0.1 ${s.key.publicKey}` })], options),
    ).rejects.toThrow('[127.0.0.1]:');
    await expect(prepareSkills([entryFor(s, { depth: 1 })], options)).rejects.toMatchObject({
      code: 'SKILL_CONFIG_INVALID',
    });
    expect(reads).toEqual([]);
  });

  it('takes the allowlist from AGENTPROTO_DEPLOY_KEY_SECRET_NAMES and the key from the environment variable of its name by default', async () => {
    const s = await setup();
    const saved = { list: process.env.AGENTPROTO_DEPLOY_KEY_SECRET_NAMES, key: process.env['skills-read-key'] };
    process.env.AGENTPROTO_DEPLOY_KEY_SECRET_NAMES = 'other-key, skills-read-key';
    process.env['skills-read-key'] = s.privateKey;
    cleanups.push(async () => {
      for (const [name, value] of [
        ['AGENTPROTO_DEPLOY_KEY_SECRET_NAMES', saved.list],
        ['skills-read-key', saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    const { sandbox } = await recordingSandbox();
    const [skill] = await prepareSkills([entryFor(s)], { cache: await newCache(), sandbox });
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toBe('# deploy\n');
  });

  it('never lets the private key show: not in any command line or environment (ssh included), error, result or store', async () => {
    const s = await setup();
    const { sandbox, runs, privateRoot } = await recordingSandbox();
    const keyBody = s.privateKey.split('\n').filter((line) => line && !line.startsWith('-----'));
    const canaries = [keyBody[1]!, keyBody[2]!];
    const watch = watchProc(canaries);
    const cache = await newCache();
    const prepared = await prepareSkills([entryFor(s)], {
      cache,
      sandbox,
      registry: s.registry,
      secrets: () => s.privateKey,
    });
    const other = await generateSshKey({ dir: await tempDir(), name: 'other' });
    const [type, body] = other.publicKey.split(/\s+/);
    const failure = await prepareSkills(
      [entryFor(s, { known_hosts: `[127.0.0.1]:${s.server.port} ${type} ${body}` })],
      {
        cache: await newCache(),
        sandbox,
        registry: s.registry,
        secrets: () => s.privateKey,
      },
    ).catch((e: unknown) => e);
    const seen = await watch.stop();
    expect(seen.hits).toEqual([]);
    expect(seen.processes.some((command) => command.startsWith('ssh '))).toBe(true);
    const texts = [
      ...renderings(failure),
      JSON.stringify(prepared),
      ...runs.flatMap((run) => [...run.argv, ...Object.values(run.env)]),
      ...(await everyFileText(cache.root)),
    ];
    for (const text of texts) for (const canary of canaries) expect(text).not.toContain(canary);
    expect(runs.some((run) => gitSubcommand(run.argv) === 'fetch')).toBe(true);
    expect(await readdir(privateRoot)).toEqual([]);
  });

  it('removes the key after a cancellation during the fetch', async () => {
    const s = await setup();
    const recording = await recordingSandbox();
    const controller = new AbortController();
    recording.onRun((argv) => {
      if (gitSubcommand(argv) === 'fetch') controller.abort(new Error('cancelled'));
    });
    const cache = await newCache();
    await expect(
      prepareSkills([entryFor(s)], {
        cache,
        sandbox: recording.sandbox,
        registry: s.registry,
        secrets: () => s.privateKey,
        signal: controller.signal,
      }),
    ).rejects.toMatchObject({ code: 'SKILL_ABORTED' });
    expect(await readdir(recording.privateRoot)).toEqual([]);
    expect((await cache.list()).objects).toEqual([]);
  });
});

/**
 * Puts `text` where ssh looks for configuration when it is not told otherwise, and takes
 * it away after the test without touching anything else: a drop-in file of its own in
 * /etc/ssh/ssh_config.d (read through the system config's Include) when that folder is
 * writable, else the account's ~/.ssh/config (ssh finds ~ through the passwd entry, not
 * $HOME), created if absent, or given the block first and its exact old bytes back after.
 */
async function installAmbientSshConfig(text: string): Promise<void> {
  const dropIns = '/etc/ssh/ssh_config.d';
  const systemConfig = existsSync('/etc/ssh/ssh_config') ? await readFile('/etc/ssh/ssh_config', 'utf8') : '';
  if (/^\s*Include\s+\/etc\/ssh\/ssh_config\.d\/\*\.conf/m.test(systemConfig)) {
    const dropIn = join(dropIns, `zz-agentproto-test-${randomBytes(6).toString('hex')}.conf`);
    try {
      await writeFile(dropIn, text, { flag: 'wx', mode: 0o644 });
      cleanups.push(() => rm(dropIn, { force: true }));
      return;
    } catch {
      // Not writable for this account: the user's own config below.
    }
  }
  const sshDir = join(homedir(), '.ssh');
  const config = join(sshDir, 'config');
  await mkdir(sshDir, { recursive: true, mode: 0o700 });
  const before = existsSync(config) ? await readFile(config) : undefined;
  cleanups.push(async () => {
    if (before === undefined) await rm(config, { force: true });
    else await writeFile(config, before);
  });
  await writeFile(config, before === undefined ? text : Buffer.concat([Buffer.from(`${text}\n`), before]), {
    mode: 0o600,
  });
}

/** An ssh-agent of our own on a socket in a scratch folder, holding `key`; stopped after the test. */
async function startAgent(key: SshKeyPair): Promise<string> {
  const { spawn, execFileSync } = await import('node:child_process');
  const socket = join(await tempDir(), 'agent.sock');
  const agent = spawn('ssh-agent', ['-D', '-a', socket], {
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  cleanups.push(async () => {
    agent.kill('SIGTERM');
  });
  for (let attempt = 0; attempt < 100; attempt += 1) {
    try {
      execFileSync('ssh-add', [key.privateKey], {
        stdio: 'ignore',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SSH_AUTH_SOCK: socket },
      });
      return socket;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error('ssh-agent did not start');
}
