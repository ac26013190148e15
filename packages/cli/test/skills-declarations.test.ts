import { spawn } from 'node:child_process';
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type GitHttpServer,
  isolatedGitEnv,
  makeRepo,
  run as runCommand,
  startGitHttpServer,
} from '@agentproto/testkit';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();
const servers: GitHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function served() {
  const root = await scratch();
  const repo = await makeRepo({
    root,
    name: 'skills.git',
    commits: [
      { files: { 'skills/review/SKILL.md': '# review one\n', 'skills/lint/SKILL.md': '# lint\n' } },
      { files: { 'skills/review/SKILL.md': '# review two\n' } },
    ],
    branches: [{ name: 'main', from: 0 }],
    tags: [{ name: 'v1', target: 0 }],
  });
  const server = await startGitHttpServer({ root });
  servers.push(server);
  return { repo, url: server.urlFor('skills.git') };
}

const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** The real bin in a child node, with `input` on its stdin. */
function agentproto(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@agentproto/source', '--import', TSX, BIN, ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('agentproto skills: declarations inline, from files and from stdin', () => {
  it('prepare takes an inline entry (a git string) and prints what it prepared', async () => {
    const { repo, url } = await served();
    const store = join(await scratch(), 'store');
    const outcome = await run(['skills', 'prepare', `${url}@v1#skills/review`, '--store', store, '--json']);
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const [skill] = JSON.parse(outcome.stdout) as Array<{ name: string; version: string; dir: string }>;
    expect(skill).toMatchObject({ name: 'review', version: repo.commits[0] });
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toBe('# review one\n');
  });

  it('- reads a declaration document from stdin (the real bin)', async () => {
    const { repo, url } = await served();
    const store = join(await scratch(), 'store');
    const outcome = await agentproto(
      ['skills', 'resolve', '-', '--store', store, '--json'],
      `skills:\n  - ${url}@v1#skills/review\n  - { provider: git, source: ${url}, version: v1, path: skills/lint, name: lint }\n`,
    );
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(
      (JSON.parse(outcome.stdout) as Array<{ name: string; version: string }>).map((s) => [s.name, s.version]),
    ).toEqual([
      ['review', repo.commits[0]],
      ['lint', repo.commits[0]],
    ]);
  });

  it('an entry error from stdin names <stdin>; a file that does not exist is the path error', async () => {
    const bad = await agentproto(['skills', 'resolve', '-'], '- { provider: git }\n');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^agentproto: SKILL_ENTRY_INVALID: <stdin>: skill entry 0 /);
    const dir = await scratch();
    const missing = await run(['skills', 'prepare', join(dir, 'skills.yaml')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `agentproto: CLI_PATH_NOT_FOUND: declaration ${join(dir, 'skills.yaml')}: file does not exist\n`,
    );
  });

  it('a file:// or local address is shown as written; a URL with a password is masked', async () => {
    const local = await run(['skills', 'resolve', 'file:///srv/git/skills.git@main#skills/review']);
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('"file:///srv/git/skills.git@main#skills/review"');
    const secret = await run(['skills', 'resolve', 'https://bot:S3CRET@example.com/skills.git#skills/review']);
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain('SKILL_URL_HAS_CREDENTIALS');
    expect(secret.stderr).not.toContain('S3CRET');
  });
});

describe('agentproto skills: several declarations in one command', () => {
  it('prepare takes two inline entries and prepares both, in the order given', async () => {
    const { repo, url } = await served();
    const store = join(await scratch(), 'store');
    const outcome = await run([
      'skills',
      'prepare',
      `${url}@main#skills/review`,
      `${url}@v1#skills/lint`,
      '--store',
      store,
      '--json',
    ]);
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const skills = JSON.parse(outcome.stdout) as Array<{ name: string; version: string; dir: string }>;
    expect(skills.map((skill) => [skill.name, skill.version])).toEqual([
      ['review', repo.commits[0]],
      ['lint', repo.commits[0]],
    ]);
    expect(await readFile(join(skills[0]!.dir, 'SKILL.md'), 'utf8')).toBe('# review one\n');
  });

  it('a file and an inline entry are one list, in the order given', async () => {
    const { repo, url } = await served();
    const dir = await scratch();
    const file = join(dir, 'skills.yaml');
    await writeFile(file, `- ${url}@v1#skills/lint\n`);
    const resolved = await run([
      'skills',
      'resolve',
      `${url}@main#skills/review`,
      file,
      '--store',
      join(dir, 'store'),
      '--json',
    ]);
    expect(resolved.stderr).toBe('');
    expect(resolved.code).toBe(0);
    expect(
      (JSON.parse(resolved.stdout) as Array<{ name: string; version: string }>).map((s) => [s.name, s.version]),
    ).toEqual([
      ['review', repo.commits[0]],
      ['lint', repo.commits[0]],
    ]);
    // The lock of both holds both, in that order.
    const locked = await run(['skills', 'lock', file, `${url}@main#skills/review`, '--store', join(dir, 'store')]);
    expect(locked.code).toBe(0);
    expect((JSON.parse(locked.stdout) as { skills: Array<{ name: string }> }).skills.map((s) => s.name)).toEqual([
      'lint',
      'review',
    ]);
  });

  it('an entry given twice fails as one declaration file holding it twice does', async () => {
    const { url } = await served();
    const dir = await scratch();
    const entry = `${url}@v1#skills/review`;
    const file = join(dir, 'twice.json');
    await writeFile(file, JSON.stringify([entry, entry]));
    const store = join(dir, 'store');
    const inline = await run(['skills', 'resolve', entry, entry, '--store', store]);
    const inFile = await run(['skills', 'resolve', file, '--store', store]);
    expect(inline.code).toBe(1);
    expect(inFile.code).toBe(1);
    expect(inline.stderr).toMatch(/^agentproto: SKILL_NAME_DUPLICATE: .*skill entry 1 .*"review", as entry 0 does/);
    expect(inFile.stderr).toMatch(/^agentproto: SKILL_NAME_DUPLICATE: .*skill entry 1 .*"review", as entry 0 does/);
    expect(inline.stdout).toBe('');
  });

  it('- twice is a wrong command line, before anything is read', async () => {
    for (const sub of ['resolve', 'prepare', 'lock']) {
      const outcome = await agentproto(['skills', sub, '-', 'x.yaml', '-'], '[]\n');
      expect(outcome.code).toBe(2);
      expect(outcome.stderr).toBe(
        `agentproto: skills ${sub}: - (a declaration on stdin) may be given once\nRun 'agentproto skills ${sub} --help' for usage.\n`,
      );
    }
  });

  it('help shows the declarations as <declaration>...; none at all is a wrong command line', async () => {
    const help = await run(['skills', 'prepare', '--help']);
    expect(help.stdout.split('\n')[0]).toBe('Usage: agentproto skills prepare <declaration>... [options]');
    const none = await run(['skills', 'lock']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^agentproto: skills lock takes one or more declarations: /);
  });
});

describe('agentproto skills prepare --link-into', () => {
  it('links each skill as DIR/<name>, or copies it with --copy; refuses what it did not make', async () => {
    const { url } = await served();
    const dir = await scratch();
    const store = join(dir, 'store');
    const into = join(dir, '.claude', 'skills');
    const linked = await run(['skills', 'prepare', `${url}@v1#skills/review`, '--store', store, '--link-into', into]);
    expect(linked.code).toBe(0);
    expect(linked.stderr).toContain('fetching review'); // progress, on stderr
    expect(linked.stdout).toContain(`linked as ${join(into, 'review')}`);
    expect(await readFile(join(into, 'review', 'SKILL.md'), 'utf8')).toBe('# review one\n');
    expect((await lstat(join(into, 'review'))).isSymbolicLink()).toBe(true);

    const copied = await run([
      'skills',
      'prepare',
      `${url}@v1#skills/review`,
      '--store',
      store,
      '--link-into',
      into,
      '--copy',
      '--json',
    ]);
    expect(copied.code).toBe(0);
    expect(JSON.parse(copied.stdout)[0]).toMatchObject({ name: 'review', linked: join(into, 'review') });
    expect((await lstat(join(into, 'review'))).isDirectory()).toBe(true);

    await mkdir(join(into, 'lint'));
    await writeFile(join(into, 'lint', 'SKILL.md'), 'mine\n');
    const refused = await run(['skills', 'prepare', `${url}@v1#skills/lint`, '--store', store, '--link-into', into]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`SKILL_LINK_CONFLICT: ${join(into, 'lint')}: a folder`);
    expect(refused.stderr).toMatch(
      new RegExp(
        `\nhint: --link-into replaces only the links and copies it made; a folder is at ${join(into, 'lint')}: move it elsewhere, or choose another --link-into DIR\n$`,
      ),
    );
    expect(await readFile(join(into, 'lint', 'SKILL.md'), 'utf8')).toBe('mine\n');
  });

  it('--copy without --link-into is a wrong command line', async () => {
    const outcome = await run(['skills', 'prepare', 'x.yaml', '--copy']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('--copy goes with --link-into');
  });
});

describe('agentproto skills lock and prepare --locked', () => {
  it('lock writes each commit and content id; after a push --locked prepares the locked commit; a changed declaration drifts', async () => {
    const { repo, url } = await served();
    const dir = await scratch();
    const store = join(dir, 'store');
    const lockFile = join(dir, 'skills.lock.json');
    const locked = await run(['skills', 'lock', `${url}@main#skills/review`, '--store', store, '--out', lockFile]);
    expect(locked.stderr).toBe('');
    expect(locked.code).toBe(0);
    expect(locked.stdout).toBe(`${lockFile}: 1 skill locked\n`);
    const lock = JSON.parse(await readFile(lockFile, 'utf8'));
    expect(lock).toMatchObject({ lockfileVersion: 1, skills: [{ name: 'review', version: repo.commits[0] }] });

    await runCommand('git', ['update-ref', 'refs/heads/main', repo.commits[1]!], {
      env: isolatedGitEnv({ GIT_DIR: repo.path }),
    });
    const prepared = await run([
      'skills',
      'prepare',
      `${url}@main#skills/review`,
      '--store',
      store,
      '--locked',
      lockFile,
      '--json',
    ]);
    expect(prepared.code).toBe(0);
    const [skill] = JSON.parse(prepared.stdout) as Array<{ version: string; dir: string }>;
    expect(skill!.version).toBe(repo.commits[0]);
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toBe('# review one\n');

    const drift = await run(['skills', 'prepare', `${url}@v1#skills/review`, '--store', store, '--locked', lockFile]);
    expect(drift.code).toBe(1);
    expect(drift.stderr).toMatch(/^agentproto: SKILL_LOCK_DRIFT: skill #0 "review" \(git\): /);
    expect(drift.stderr).toMatch(
      /\nhint: nothing of that entry was fetched; if the change is intended, write the lock again with 'agentproto skills lock <declaration>\.\.\. --out <lock file>'/,
    );

    // A lock file that is not one: SKILL_LOCK_INVALID, before anything is asked of the origin.
    const notALock = join(dir, 'not-a.lock.json');
    await writeFile(notALock, JSON.stringify({ lockfileVersion: 1, skills: [{ name: 'review' }] }));
    const invalid = await run(['skills', 'prepare', `${url}@v1#skills/review`, '--store', store, '--locked', notALock]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(
      /^agentproto: SKILL_LOCK_INVALID: skills lock .*\nhint: --locked takes a lock file as 'agentproto skills lock' writes it; .*\n$/,
    );

    // Without --out the lock is printed.
    const printed = await run(['skills', 'lock', `${url}@main#skills/review`, '--store', store]);
    expect(JSON.parse(printed.stdout)).toMatchObject({ skills: [{ version: repo.commits[1] }] });
  });
});
