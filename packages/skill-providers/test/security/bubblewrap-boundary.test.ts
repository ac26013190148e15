import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  generateSshKey,
  makeRepo,
  renderings,
  startGitHttpServer,
  startGitSshServer,
  watchProc,
} from '@agentproto/testkit';
import {
  type BubblewrapSandbox,
  GitSkillProvider,
  type RunOptions,
  type Sandbox,
  type SkillSource,
  bubblewrapSandbox,
  createRegistry,
  gitProvider,
  localSandbox,
  prepareSkills,
} from '@agentproto/skill-providers';
import { everyFileText, gitSubcommand } from '../support/git.js';
import { newCache } from '../support/skills.js';
import { tempDir } from '../support/temp.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const preparer = fileURLToPath(new URL('./support/prepare-in-bubblewrap.ts', import.meta.url));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One repository over smart HTTP (Basic auth) and SSH (a deploy key), and the secrets that must never leak. */
async function servers() {
  const root = await tempDir();
  await makeRepo({
    root,
    name: 'skills.git',
    commits: [{ files: { 'skills/deploy/SKILL.md': '# deploy\n', 'skills/deploy/notes.md': 'notes\n' } }],
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
  const keyLines = privateKey.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'));
  return {
    http,
    ssh,
    password,
    privateKey,
    canaries: [password, Buffer.from(`bot:${password}`).toString('base64'), ...keyLines.slice(0, 3)],
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

type Servers = Awaited<ReturnType<typeof servers>>;

function credentials(s: Servers, password = s.password) {
  return {
    registry: createRegistry([gitProvider({ deployKeySecretNames: ['skills-read-key'] })]),
    vault: () => ({ username: 'bot', password }),
    secrets: () => s.privateKey,
  };
}

async function isolated(): Promise<{ sandbox: BubblewrapSandbox; privateRoot: string }> {
  const privateRoot = await tempDir();
  const sandbox = bubblewrapSandbox({ privateRoot });
  cleanups.push(() => sandbox.close());
  return { sandbox, privateRoot };
}

/** The git provider, except that it names a host the source does not use as its egress: a wrong list. */
class MisdeclaredEgressProvider extends GitSkillProvider {
  override egressHosts(_source: SkillSource): string[] {
    return ['mirror.example.org'];
  }
}

describe('the network boundary of bubblewrapSandbox', () => {
  it.each(['http', 'ssh'] as const)(
    'refuses a %s source its provider did not declare as egress: the proxy refused it, git never reached the server',
    async (transport) => {
      const s = await servers();
      const entry = transport === 'http' ? s.httpEntry : s.sshEntry;
      const port = transport === 'http' ? s.http.port : s.ssh.port;
      const registry = createRegistry([new MisdeclaredEgressProvider({ deployKeySecretNames: ['skills-read-key'] })]);
      const { sandbox, privateRoot } = await isolated();
      const error = await prepareSkills([entry], {
        ...credentials(s),
        registry,
        cache: await newCache(),
        sandbox,
      }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({ code: 'SKILL_EGRESS_REFUSED', phase: 'resolve' });
      expect((error as Error).message).toContain(`could not connect to 127.0.0.1:${port}`);
      expect((error as Error).message).toContain('only mirror.example.org');
      expect(sandbox.refusedEgress).toContainEqual({ host: '127.0.0.1', port });
      if (transport === 'http') expect(s.http.stats.requests).toBe(0);
      expect(await readdir(privateRoot)).toEqual([]);

      // Not our own URL check: the same provider and source prepare where there is no boundary.
      const [skill] = await prepareSkills([entry], {
        ...credentials(s),
        registry,
        cache: await newCache(),
        sandbox: localSandbox({ privateRoot: await tempDir() }),
      });
      expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toBe('# deploy\n');
    },
    60_000,
  );

  it('gives no network at all without a grant, and closes its proxy once no preparation holds one', async () => {
    const s = await servers();
    const { sandbox } = await isolated();
    const dir = await sandbox.makePrivateDir();
    const curl = ['curl', '-sS', '--max-time', '5', `${s.http.url}/skills.git/info/refs`];
    const without = await sandbox.run(curl, { env: { PATH: '/usr/bin:/bin' }, cwd: dir });
    expect(without.code).not.toBe(0);
    expect(without.stderr.toString()).toMatch(/Failed to connect|Couldn't connect/);
    // A grant that is not `host` or `host:port` is refused whole, and opens nothing.
    await expect(
      sandbox.allowEgress([`127.0.0.1:${s.http.port}`, 'not a host'], new AbortController().signal),
    ).rejects.toMatchObject({ code: 'SANDBOX_EGRESS_HOST_INVALID' });
    const refusedGrant = await sandbox.run(curl, { env: { PATH: '/usr/bin:/bin' }, cwd: dir });
    expect(refusedGrant.code).not.toBe(0);
    expect(s.http.stats.requests).toBe(0);
    const dir2 = await sandbox.makePrivateDir();
    await sandbox.allowEgress([`127.0.0.1:${s.http.port}`], new AbortController().signal);
    const granted = await sandbox.run(curl, { env: { PATH: '/usr/bin:/bin' }, cwd: dir2 });
    // The server answers (401: no credential), so the connection went through the proxy.
    expect(granted.code, granted.stderr.toString()).toBe(0);
    expect(s.http.stats.requests).toBe(1);
    await sandbox.removePrivateDir(dir);
    await sandbox.removePrivateDir(dir2);
    // The grant ended with the folder: a command now has no way out again.
    const after = await sandbox.run(curl, { env: { PATH: '/usr/bin:/bin' } });
    expect(after.code).not.toBe(0);
    expect(s.http.stats.requests).toBe(1);
  }, 60_000);
});

describe('the egress proxy of bubblewrapSandbox', () => {
  it('never keeps the host process alive: a process that prepared without close() exits by itself', async () => {
    const s = await servers();
    const storeRoot = join(await tempDir(), 'store');
    const child = spawn(
      process.execPath,
      ['--conditions=@agentproto/source', '--import', 'tsx', preparer, storeRoot, JSON.stringify([s.httpEntry])],
      {
        cwd: repoRoot,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SKILL_TEST_USER: 'bot', SKILL_TEST_PASSWORD: s.password },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await ended;
    clearTimeout(timer);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject([{ name: 'h', from: 'origin' }]);
  }, 90_000);
});

describe('what a command in bubblewrapSandbox sees', () => {
  it("cannot read the host's ~/.ssh, ~/.gitconfig, /etc/shadow, another private folder, or the real home", async () => {
    const { sandbox, privateRoot } = await isolated();
    const canary = `canary-${randomBytes(12).toString('hex')}`;
    // A home this test makes, as HOME…
    const home = await tempDir();
    await mkdir(join(home, '.ssh'), { mode: 0o700 });
    await writeFile(join(home, '.ssh', 'id_ed25519'), `${canary}\n`, { mode: 0o600 });
    await writeFile(join(home, '.gitconfig'), `[user]\n\tname = ${canary}\n`);
    // …and a file in the real one, unique and removed afterwards.
    const real = join(homedir(), `.agentproto-canary-${randomBytes(6).toString('hex')}`);
    await writeFile(real, `${canary}\n`, { mode: 0o600 });
    cleanups.push(() => rm(real, { force: true }));
    const dir = await sandbox.makePrivateDir();
    const other = await sandbox.makePrivateDir();
    await sandbox.writeFile(join(other, 'deploy-key'), `${canary}\n`, { mode: 0o600 });
    cleanups.push(async () => {
      await sandbox.removePrivateDir(dir);
      await sandbox.removePrivateDir(other);
    });
    const paths = [
      join(home, '.ssh', 'id_ed25519'),
      join(home, '.gitconfig'),
      real,
      join(homedir(), '.ssh'),
      join(homedir(), '.gitconfig'),
      '/etc/shadow',
    ];
    for (const path of paths) {
      const result = await sandbox.run(['cat', path], { env: { PATH: '/usr/bin:/bin', HOME: dir }, cwd: dir });
      expect(result.code, path).not.toBe(0);
      expect(result.stdout.toString() + result.stderr.toString(), path).not.toContain(canary);
    }
    const listing = await sandbox.run(['ls', '-a', homedir(), home], { env: { PATH: '/usr/bin:/bin' }, cwd: dir });
    expect(listing.code).not.toBe(0);
    // A private folder this command's paths do not name is not there (another entry's credentials).
    const siblings = await sandbox.run(['sh', '-c', 'ls -a "$0"; cat "$0"/*/deploy-key', privateRoot], {
      env: { PATH: '/usr/bin:/bin', HOME: dir },
      cwd: dir,
    });
    expect(siblings.code).not.toBe(0);
    expect(siblings.stdout.toString().split('\n').filter(Boolean).sort()).toEqual(['.', '..', basename(dir)]);
    expect(siblings.stdout.toString() + siblings.stderr.toString()).not.toContain(canary);
    // Its own private folder is there, writable, at the same path.
    const own = await sandbox.run(['sh', '-c', 'echo ok > "$HOME/written" && cat "$HOME/written"'], {
      env: { PATH: '/usr/bin:/bin', HOME: dir },
      cwd: dir,
    });
    expect(own.stdout.toString()).toBe('ok\n');
    expect(await readFile(join(dir, 'written'), 'utf8')).toBe('ok\n');
  }, 60_000);

  it('refuses a working folder that would show the home or the private root, rejects a program it cannot start, and reports exit codes and signals', async () => {
    const { sandbox, privateRoot } = await isolated();
    const env = { PATH: '/usr/bin:/bin' };
    for (const cwd of [homedir(), privateRoot, '/usr', '/etc/ssh'])
      await expect(sandbox.run(['true'], { env, cwd }), cwd).rejects.toMatchObject({ code: 'SANDBOX_SPEC_INVALID' });
    await expect(sandbox.run(['no-such-program-here'], { env })).rejects.toMatchObject({
      code: 'SANDBOX_SETUP_FAILED',
    });
    const exit = await sandbox.run(['sh', '-c', 'exit 3'], { env });
    expect(exit.code).toBe(3);
    const killed = await sandbox.run(['sh', '-c', 'kill -TERM $$'], { env });
    expect(killed.code).toBe(128 + 15);
  }, 60_000);
});

/** The bubblewrap sandbox, with a hook before each network command; getters of the original stay live. */
function hooked(
  base: BubblewrapSandbox,
  before: (argv: readonly string[], options: RunOptions) => Promise<void>,
): Sandbox {
  return {
    name: base.name,
    capabilities: base.capabilities,
    run: async (argv, options) => {
      if (['ls-remote', 'fetch'].includes(gitSubcommand(argv) ?? '')) await before(argv, options);
      return base.run(argv, options);
    },
    writeFile: base.writeFile,
    makePrivateDir: base.makePrivateDir,
    removePrivateDir: base.removePrivateDir,
    sweepPrivateDirs: base.sweepPrivateDirs,
    allowEgress: base.allowEgress,
  };
}

/** Credential files in the private folders now, with their modes. */
async function credentialFiles(privateRoot: string): Promise<Array<{ path: string; mode: number }>> {
  const found: Array<{ path: string; mode: number }> = [];
  for (const name of await readdir(privateRoot)) {
    if (name.endsWith('.owner') || name.startsWith('.')) continue;
    for (const file of await readdir(join(privateRoot, name)).catch(() => [] as string[])) {
      if (file.includes('deploy-key') || file.includes('known-hosts') || file.startsWith('agentproto-headers-')) {
        const path = join(privateRoot, name, file);
        found.push({ path, mode: (await stat(path)).mode & 0o777 });
      }
    }
  }
  return found;
}

describe('credentials in bubblewrapSandbox', () => {
  it('key and header files are 0600 in the private folder while git runs, and gone after success, failure and abort', async () => {
    const s = await servers();
    const { sandbox: base, privateRoot } = await isolated();
    const seen: Array<{ path: string; mode: number }> = [];
    const sandbox = hooked(base, async () => {
      seen.push(...(await credentialFiles(privateRoot)));
    });
    // Success, both transports.
    await prepareSkills([s.httpEntry, s.sshEntry], { ...credentials(s), cache: await newCache(), sandbox });
    expect(seen.some(({ path }) => path.includes('agentproto-headers-'))).toBe(true);
    expect(seen.some(({ path }) => path.endsWith('deploy-key'))).toBe(true);
    expect(seen.every(({ mode }) => mode === 0o600)).toBe(true);
    expect(await readdir(privateRoot)).toEqual([]);

    // Failure: a wrong password, a key the server does not know.
    const wrongKey = await generateSshKey({ dir: await tempDir(), name: 'wrong' });
    await expect(
      prepareSkills([s.httpEntry], { ...credentials(s, 'wrong'), cache: await newCache(), sandbox }),
    ).rejects.toMatchObject({ code: 'SKILL_AUTH_FAILED' });
    await expect(
      prepareSkills([s.sshEntry], {
        ...credentials(s),
        secrets: () => readFile(wrongKey.privateKey, 'utf8'),
        cache: await newCache(),
        sandbox,
      }),
    ).rejects.toMatchObject({ code: 'SKILL_AUTH_FAILED' });
    expect(await readdir(privateRoot)).toEqual([]);

    // Abort, as the first network command starts: the command is killed, the folder removed.
    for (const entry of [s.httpEntry, s.sshEntry]) {
      const controller = new AbortController();
      const aborting = hooked(base, async () => {
        expect((await credentialFiles(privateRoot)).length).toBeGreaterThan(0);
        controller.abort(new Error('stop'));
      });
      await expect(
        prepareSkills([entry], {
          ...credentials(s),
          cache: await newCache(),
          sandbox: aborting,
          signal: controller.signal,
        }),
      ).rejects.toMatchObject({ code: 'SKILL_ABORTED' });
      expect(await readdir(privateRoot)).toEqual([]);
    }
  }, 120_000);

  it('secrets never appear in errors, output, the command lines or environments of any process, or the cache', async () => {
    const s = await servers();
    const { sandbox: base } = await isolated();
    const outputs: string[] = [];
    const sandbox: Sandbox = {
      ...hooked(base, async () => undefined),
      run: async (argv, options) => {
        const result = await base.run(argv, options);
        outputs.push(result.stdout.toString('latin1'), result.stderr.toString('latin1'));
        return result;
      },
    };
    const cache = await newCache();
    const watch = watchProc(s.canaries);
    let failure: unknown;
    try {
      await prepareSkills([s.httpEntry, s.sshEntry], { ...credentials(s), cache, sandbox });
      // A failure too: the server refuses a wrong password, which must not be echoed either.
      failure = await prepareSkills([s.httpEntry], {
        ...credentials(s, `${s.password}-wrong`),
        cache: await newCache(),
        sandbox,
      }).catch((error: unknown) => error);
    } finally {
      const { hits, processes } = await watch.stop();
      expect(hits).toEqual([]);
      // The watch saw the sandboxes it was meant to check.
      expect(processes.some((command) => command.includes('bwrap'))).toBe(true);
    }
    expect(failure).toMatchObject({ code: 'SKILL_AUTH_FAILED' });
    const texts = [...outputs, ...renderings(failure), ...(await everyFileText(cache.root))];
    for (const canary of s.canaries) expect(texts.filter((text) => text.includes(canary))).toEqual([]);
    expect(existsSync(cache.root)).toBe(true);
  }, 120_000);
});
