import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { basicAuthorizationHeader, isolatedGitEnv, makeRepo, run } from '@agentproto/testkit';
import { directoryTree, fetchDirectory, listRefs, systemGitEngine, type GitAuth } from '../src/index.js';
import { rejection, scratch, serve } from './support/fixtures.js';
import { recordingHost, renderings, setProcessEnv, settings, subcommand, watchProc } from './support/system-git.js';

const USER = 'alice';
const PASSWORD = 'CANARY-PASSWORD-4f9c2d';
const HEADER = basicAuthorizationHeader(USER, PASSWORD);
/** Every form the credential could leak in: the password, `user:password`, the header and its base64. */
const CANARIES = [PASSWORD, `${USER}:${PASSWORD}`, HEADER, HEADER.slice('Basic '.length)];

/** The environment variables a child may get; anything else came from somewhere it should not. */
const ALLOWED_ENV = new Set([
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_CONFIG_GLOBAL',
  'GIT_CEILING_DIRECTORIES',
  'GIT_TERMINAL_PROMPT',
  'GIT_LFS_SKIP_SMUDGE',
  'GIT_NO_REPLACE_OBJECTS',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
]);

async function protectedRepo(files: Record<string, string | Buffer> = { 'skills/a/SKILL.md': 'a', 'other.md': 'o' }) {
  const root = await scratch();
  const repo = await makeRepo({ root, name: 'private.git', commits: [{ files }] });
  const server = await serve({ root, auth: { username: USER, password: PASSWORD } });
  return { repo, server, url: server.urlFor('private.git') };
}

const auth: GitAuth = () => ({ Authorization: HEADER });

describe('system-git isolation', () => {
  it("builds every child environment from nothing: none of this process's variables, the required settings on every command", async () => {
    const { repo, url } = await protectedRepo();
    const work = await scratch();
    // A developer's environment that must not reach git: an agent, askpass programs, a gitdir.
    setProcessEnv({
      SSH_AUTH_SOCK: '/tmp/not-an-agent.sock',
      GIT_ASKPASS: '/bin/echo',
      SSH_ASKPASS: '/bin/echo',
      GIT_DIR: '/tmp/not-a-repo',
      GIT_CONFIG_PARAMETERS: "'http.extraheader'='X-Leak: yes'",
      GITHUB_TOKEN: 'ghp_should_never_reach_git',
    });
    const recording = recordingHost();
    const engine = systemGitEngine({ host: recording.host });
    await listRefs(url, { engine, auth });
    await fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(work, 'out'), { engine, auth });

    expect(recording.calls.length).toBeGreaterThan(3);
    for (const call of recording.calls) {
      for (const name of Object.keys(call.env))
        expect(ALLOWED_ENV.has(name), `${name} in ${call.argv.join(' ')}`).toBe(true);
      expect(call.env).toMatchObject({
        LANG: 'C',
        LC_ALL: 'C',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
        GIT_LFS_SKIP_SMUDGE: '1',
      });
      // A host was given, so not this process's PATH but the standard system folders.
      expect(call.env.PATH).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
      // HOME is the operation's private folder, also the command's working directory.
      expect(call.env.HOME).toBe(call.cwd);
      expect(call.env.HOME).not.toBe(process.env.HOME);
      for (const setting of [
        'core.hooksPath=/dev/null',
        'protocol.version=2',
        'protocol.file.allow=never',
        'protocol.ext.allow=never',
        'http.followRedirects=false',
        'credential.helper=',
        'core.askPass=',
      ]) {
        expect(settings(call.argv)).toContain(setting);
      }
      for (const text of [...call.argv, ...Object.values(call.env), call.stdin ?? '']) {
        for (const canary of CANARIES) expect(text).not.toContain(canary);
      }
    }
    const init = recording.calls.find((call) => subcommand(call.argv) === 'init');
    expect(init?.argv).toContain('--template=');
    const lsRemote = recording.calls.find((call) => subcommand(call.argv) === 'ls-remote');
    expect(lsRemote?.argv.slice(-2)).toEqual(['--', url]);
    // Only http is allowed for an http URL.
    expect(settings(lsRemote?.argv ?? [])).toEqual(
      expect.arrayContaining(['protocol.allow=never', 'protocol.http.allow=always']),
    );
  });

  it(`never lets the credential (${PASSWORD}) appear in any process's argv or environment, git's own children included`, async () => {
    // Large enough that the transfer takes a while, so the poller sees git-remote-http at work.
    const { repo, url } = await protectedRepo({
      'skills/a/SKILL.md': 'a',
      'skills/a/data.bin': Buffer.alloc(24 * 1024 * 1024, 3),
    });
    const work = await scratch();
    let seenHelper = false;
    for (let attempt = 0; attempt < 5 && !seenHelper; attempt += 1) {
      const watch = watchProc(CANARIES);
      try {
        await fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(work, `out-${attempt}`), {
          engine: systemGitEngine(),
          auth,
        });
      } finally {
        const seen = await watch.stop();
        expect(seen.hits).toEqual([]);
        expect(seen.scans).toBeGreaterThan(0);
        seenHelper = seen.processes.some(
          (command) => command.startsWith('git-remote-http') || command.includes(' remote-http '),
        );
      }
    }
    // The poller did watch the helper that sends the headers: the check above was not vacuous.
    expect(seenHelper).toBe(true);
  });

  it('keeps the credential out of every error: message, stack, cause chain', async () => {
    const { repo, url } = await protectedRepo();
    const work = await scratch();
    const engine = systemGitEngine();
    const wrong: GitAuth = () => ({ Authorization: basicAuthorizationHeader('mallory', PASSWORD) });
    const errors = [
      await rejection(listRefs(url, { engine, auth: wrong })),
      await rejection(
        fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(work, 'out'), { engine, auth: wrong }),
      ),
      await rejection(directoryTree(url, repo.commits[0] as string, 'nope', { engine, auth })),
    ];
    expect(errors.map((error) => error.code)).toEqual(['GIT_AUTH_FAILED', 'GIT_AUTH_FAILED', 'GIT_NOT_A_DIRECTORY']);
    for (const error of errors) {
      for (const text of renderings(error)) for (const canary of CANARIES) expect(text).not.toContain(canary);
    }
  });

  it.each([
    [401, 'GIT_AUTH_FAILED'],
    [403, 'GIT_AUTH_FAILED'],
    [404, 'GIT_REPOSITORY_NOT_FOUND'],
    [500, 'GIT_TRANSPORT'],
    [200, 'GIT_TRANSPORT'],
  ])('maps HTTP %i to %s and never lets a server echo the credential into the error', async (status, code) => {
    const { createServer } = await import('node:http');
    const echo = createServer((req, res) => {
      res.writeHead(status, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Basic realm="echo"' });
      res.end(`you sent: ${req.headers.authorization ?? '(nothing)'}\n`);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(echo.address() as { port: number }).port}/repo.git`;
    try {
      const engine = systemGitEngine();
      const work = await scratch();
      const errors = [
        await rejection(listRefs(url, { engine, auth })),
        await rejection(fetchDirectory(url, 'a'.repeat(40), '', join(work, 'out'), { engine, auth })),
      ];
      for (const error of errors) {
        expect(error.code).toBe(code);
        if (code === 'GIT_AUTH_FAILED') expect(error.status).toBe(status);
        for (const text of renderings(error)) for (const canary of CANARIES) expect(text).not.toContain(canary);
      }
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });

  it('never reads the config of a repository around the work folder (its insteadOf would send us elsewhere)', async () => {
    const { repo, url } = await protectedRepo();
    const outer = await scratch();
    await run('git', ['init', '-q', outer], { env: isolatedGitEnv() });
    const base = url.slice(0, url.indexOf('/private.git'));
    await writeFile(
      join(outer, '.git', 'config'),
      `[url "http://127.0.0.1:1/"]\n\tinsteadOf = ${base}/\n[http]\n\textraHeader = X-From-The-Outer-Repo: yes\n`,
      { flag: 'a' },
    );
    const workDir = join(outer, 'work');
    await mkdir(workDir, { mode: 0o700 });
    const refs = await listRefs(url, { engine: systemGitEngine(), auth, workDir });
    expect(refs.refs.find((ref) => ref.name === 'refs/heads/main')?.oid).toBe(repo.commits[0]);
  });

  it('abort kills the running git (and its children) and leaves no folder, no destination, no process', async () => {
    const { repo, url } = await protectedRepo({
      'skills/a/SKILL.md': 'a',
      'skills/a/data.bin': Buffer.alloc(32 * 1024 * 1024, 5),
    });
    const work = await scratch();
    const privateDir = join(work, 'private');
    await mkdir(privateDir);
    const dest = join(work, 'out');
    const controller = new AbortController();
    const recording = recordingHost();
    // Abort shortly after the blobs' fetch has started: git, git-remote-http and the transfer are running.
    recording.beforeRun = (call) => {
      if (subcommand(call.argv) === 'fetch' && call.argv.includes('--stdin'))
        setTimeout(() => controller.abort(new Error('stop')), 30);
    };
    const started = Date.now();
    const error = await rejection(
      fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest, {
        engine: systemGitEngine({ host: recording.host }),
        auth,
        privateDir,
        signal: controller.signal,
      }),
    );
    expect(error).toMatchObject({ code: 'GIT_ABORTED', operation: 'fetchDirectory' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
    // No process is left working in the removed folder.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const left: string[] = [];
    for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
      if (cmdline.includes(privateDir) || environ.includes(privateDir)) left.push(cmdline.split('\0').join(' '));
    }
    expect(left).toEqual([]);
  });

  it('an aborted signal starts nothing', async () => {
    const { repo, server, url } = await protectedRepo();
    const recording = recordingHost();
    const engine = systemGitEngine({ host: recording.host });
    const signal = AbortSignal.abort(new Error('no'));
    await expect(listRefs(url, { engine, auth, signal })).rejects.toMatchObject({ code: 'GIT_ABORTED' });
    await expect(
      directoryTree(url, repo.commits[0] as string, 'skills/a', { engine, auth, signal }),
    ).rejects.toMatchObject({ code: 'GIT_ABORTED' });
    expect(recording.calls).toEqual([]);
    expect(server.stats.requests).toBe(0);
  });
});
