import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openContentStore, sweepPrivateDirs } from '@agentproto/content-cache';
import { generateSshKey, makeRepo, startGitHttpServer, startGitSshServer } from '@agentproto/testkit';
import { createRegistry, gitProvider, localSandbox, prepareSkills } from '@agentproto/skill-providers';
import { tempDir } from '../support/temp.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const preparer = fileURLToPath(new URL('./support/prepare-with-credentials.ts', import.meta.url));
const holder = fileURLToPath(new URL('./support/hold-private-dir.ts', import.meta.url));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SKILLS = 12;

/** One repository with SKILLS skills, served over HTTPS-like smart HTTP with Basic auth and over SSH with a deploy key. */
async function servers() {
  const root = await tempDir();
  const files: Record<string, string> = {};
  for (let i = 0; i < SKILLS; i += 1) {
    files[`skills/s${i}/SKILL.md`] = `# s${i}\n`;
    for (let j = 0; j < 20; j += 1) files[`skills/s${i}/ref/${j}.md`] = `${i} ${j}\n`.repeat(50);
  }
  await makeRepo({ root, name: 'skills.git', commits: [{ files }] });
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const http = await startGitHttpServer({ root, auth: { username: 'bot', password } });
  const key = await generateSshKey({ dir: await tempDir(), name: 'deploy' });
  const ssh = await startGitSshServer({ root, authorizedKeys: [key.publicKey] });
  cleanups.push(
    () => http.close(),
    () => ssh.close(),
  );
  // What must never stay on disk: the password, the header git gets it in, the key's body.
  const keyLines = key.privateKeyText.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'));
  const canaries = [password, Buffer.from(`bot:${password}`).toString('base64'), ...keyLines.slice(0, 3)];
  const declaration = (skill: number) => [
    {
      provider: 'git',
      source: http.urlFor('skills.git'),
      version: 'main',
      path: `skills/s${skill}`,
      name: `h${skill}`,
    },
    {
      provider: 'git',
      source: ssh.urlFor('skills.git'),
      version: 'main',
      path: `skills/s${skill}`,
      name: `s${skill}`,
      config: { deploy_key_secret_name: 'skills-read-key', known_hosts: ssh.knownHostsLine },
    },
  ];
  const env = { SKILL_TEST_DEPLOY_KEY: key.privateKeyText, SKILL_TEST_USER: 'bot', SKILL_TEST_PASSWORD: password };
  return { canaries, declaration, env };
}

interface Child {
  proc: ChildProcess;
  ready: Promise<void>;
  /** The first line the child printed on stdout. */
  firstLine: Promise<string>;
  closed: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function start(script: string, args: string[], env: Record<string, string>): Child {
  const proc = spawn(process.execPath, ['--conditions=@agentproto/source', '--import', 'tsx', script, ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let onReady: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  let onLine: (line: string) => void;
  const firstLine = new Promise<string>((resolve) => (onLine = resolve));
  proc.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk;
    if (stdout.includes('\n')) onLine(stdout.slice(0, stdout.indexOf('\n')));
  });
  proc.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk;
    if (stderr.includes('ready\n')) onReady();
  });
  const closed = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    proc.on('close', (code) => {
      onReady();
      onLine(stdout);
      resolve({ code, stdout, stderr });
    });
  });
  return { proc, ready, firstLine, closed };
}

/** Every regular file under `dir` whose bytes hold one of `canaries`; links are not followed. */
async function filesHolding(dir: string, canaries: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const text = (await readFile(path).catch(() => Buffer.alloc(0))).toString('latin1');
        if (canaries.some((canary) => text.includes(canary))) found.push(path);
      }
    }
  };
  await walk(dir);
  return found;
}

/** Whether a deploy key or a header file is in one of the private folders now (names only: cheap enough to poll). */
async function credentialFileExists(privateRoot: string): Promise<boolean> {
  for (const name of await readdir(privateRoot).catch(() => [] as string[])) {
    if (name.endsWith('.owner') || name.startsWith('.')) continue;
    const inside = await readdir(join(privateRoot, name)).catch(() => [] as string[]);
    if (inside.some((file) => file.endsWith('deploy-key') || file.startsWith('agentproto-headers-'))) return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Kills `rounds` preparations with SIGKILL: every other one as soon as a credential file is
 * on disk plus a random delay, the others at a random point after start, and the last one the
 * moment a credential file is on disk. Each preparation sweeps what the dead ones before it
 * left, so what is left at the end is the last one's: killed at a random point, it could
 * finish first and leave nothing. Returns how many private folders were left behind (the
 * test is worth something only if some were).
 */
async function killRounds(
  rounds: number,
  storeRoot: string,
  tmp: string,
  s: Awaited<ReturnType<typeof servers>>,
): Promise<number> {
  const privateRoot = join(storeRoot, 'private');
  for (let round = 0; round < rounds; round += 1) {
    const child = start(preparer, [storeRoot, JSON.stringify(s.declaration(round))], { ...s.env, TMPDIR: tmp });
    await child.ready;
    const last = round === rounds - 1;
    if (round % 2 === 0 || last) {
      const until = Date.now() + 10_000;
      while (Date.now() < until && !(await credentialFileExists(privateRoot))) await sleep(5);
      if (!last) await sleep(Math.random() * 400);
    } else {
      await sleep(Math.random() * 2500);
    }
    child.proc.kill('SIGKILL');
    await child.closed;
  }
  return (await readdir(privateRoot).catch(() => [])).filter((name) => name.endsWith('.owner')).length;
}

describe('credentials never outlive a killed preparation', () => {
  it('deploy keys and Basic-auth header files of preparations killed at random points are securely removed by the next preparation', async () => {
    const s = await servers();
    const storeRoot = join(await tempDir(), 'store');
    const tmp = await tempDir('agentproto-child-tmp-');
    const left = await killRounds(4, storeRoot, tmp, s);
    expect(left).toBeGreaterThan(0);
    // The last kill can come just after its preparation removed its credentials (it saw the
    // file, then the fetch ended), or between a file's creation and its bytes: one more
    // preparation (a skill no round prepared), killed once a file holds a canary, until one does.
    const privateRoot = join(storeRoot, 'private');
    for (let skill = 4; skill < 8 && (await filesHolding(privateRoot, s.canaries)).length === 0; skill += 1) {
      const child = start(preparer, [storeRoot, JSON.stringify(s.declaration(skill))], { ...s.env, TMPDIR: tmp });
      await child.ready;
      const until = Date.now() + 10_000;
      while (Date.now() < until && (await filesHolding(privateRoot, s.canaries)).length === 0) await sleep(2);
      child.proc.kill('SIGKILL');
      await child.closed;
    }
    expect((await filesHolding(privateRoot, s.canaries)).length).toBeGreaterThan(0);

    // One normal run, in its own process: it sweeps before it prepares.
    const normal = start(preparer, [storeRoot, JSON.stringify(s.declaration(SKILLS - 1))], { ...s.env, TMPDIR: tmp });
    const outcome = await normal.closed;
    expect(outcome.code, outcome.stderr).toBe(0);

    for (const dir of [storeRoot, tmp]) expect(await filesHolding(dir, s.canaries)).toEqual([]);
    // Nothing of any preparation is left: no folder, no owner record, no trash.
    expect(await readdir(join(storeRoot, 'private'))).toEqual([]);
    expect((await lstat(join(storeRoot, 'private'))).mode & 0o777).toBe(0o700);
  }, 180_000);

  it("`cache gc` (the store's gc) removes them too, without any preparation", async () => {
    const s = await servers();
    const storeRoot = join(await tempDir(), 'store');
    const tmp = await tempDir('agentproto-child-tmp-');
    expect(await killRounds(3, storeRoot, tmp, s)).toBeGreaterThan(0);
    const report = await (await openContentStore({ root: storeRoot })).gc();
    expect(report.removedPrivate).toBeGreaterThan(0);
    for (const dir of [storeRoot, tmp]) expect(await filesHolding(dir, s.canaries)).toEqual([]);
    expect(await readdir(join(storeRoot, 'private'))).toEqual([]);
  }, 180_000);

  it('never sweeps the private folder of a live preparation, while removing a dead one beside it', async () => {
    const s = await servers();
    const storeRoot = join(await tempDir(), 'store');
    const privateRoot = join(storeRoot, 'private');
    const live = `live-${randomBytes(8).toString('hex')}`;
    const dead = `dead-${randomBytes(8).toString('hex')}`;
    const holderA = start(holder, [privateRoot, live], {});
    const holderB = start(holder, [privateRoot, dead], {});
    cleanups.push(async () => void holderA.proc.kill('SIGKILL'));
    const [dirA, dirB] = await Promise.all([holderA.firstLine, holderB.firstLine]);
    expect(dirA.startsWith(privateRoot)).toBe(true);
    expect(dirB.startsWith(privateRoot)).toBe(true);
    holderB.proc.kill('SIGKILL');
    await holderB.closed;

    // Sweeps from this process, and whole preparations (which sweep first) beside the live one.
    const sandbox = localSandbox({ privateRoot });
    const cache = await openContentStore({ root: storeRoot });
    const registry = createRegistry([gitProvider({ deployKeySecretNames: ['skills-read-key'] })]);
    const secrets = (name: string) => (name === 'skills-read-key' ? s.env.SKILL_TEST_DEPLOY_KEY : undefined);
    const vault = () => ({ username: 'bot', password: s.env.SKILL_TEST_PASSWORD });
    let swept = await sweepPrivateDirs(privateRoot);
    swept += await sweepPrivateDirs(privateRoot);
    await prepareSkills(s.declaration(0), { cache, sandbox, registry, secrets, vault });
    swept += (await cache.gc()).removedPrivate;
    expect(swept).toBe(1);
    const remaining = (await readdir(privateRoot)).filter((name) => !name.endsWith('.owner'));
    expect(remaining).toHaveLength(1);
    expect(await readFile(join(privateRoot, remaining[0]!, 'key'), 'utf8')).toBe(live);

    holderA.proc.stdin!.write('done\n');
    const outcome = await holderA.closed;
    expect(outcome.stdout.trim().split('\n').pop()).toBe('intact');
    expect(await readdir(privateRoot)).toEqual([]);
  }, 180_000);

  it('judges an owner dead when its pid now belongs to a process that started at another time (pid reuse)', async () => {
    const privateRoot = join(await tempDir(), 'private');
    await mkdir(privateRoot, { mode: 0o700 });
    const id = `p-${randomBytes(12).toString('hex')}`;
    await mkdir(join(privateRoot, id), { mode: 0o700 });
    await writeFile(join(privateRoot, id, 'key'), 'secret');
    const boot = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    const { readlink } = await import('node:fs/promises');
    const pidNamespace = await readlink('/proc/self/ns/pid');
    // This very process's pid, with a start time it never had: what a reused pid looks like.
    await writeFile(
      join(privateRoot, `${id}.owner`),
      JSON.stringify({ pid: process.pid, start: '1', boot, pidNamespace }),
    );
    expect(await sweepPrivateDirs(privateRoot)).toBe(1);
    expect(await readdir(privateRoot)).toEqual([]);
  });
});
