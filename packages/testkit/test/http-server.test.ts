import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  basicAuthorizationHeader,
  makeRepo,
  parseLsRemote,
  startGitHttpServer,
  tempDir,
  type GitHttpServer,
  type MadeRepo,
  type TempDir,
} from '@agentproto/testkit';
import { git, gitFails } from './support.js';

let root: TempDir;
let work: TempDir;
let repo: MadeRepo;
let server: GitHttpServer | undefined;

beforeEach(async () => {
  root = await tempDir('testkit-http-root-');
  work = await tempDir('testkit-http-work-');
  repo = await makeRepo({
    root: root.path,
    name: 'skills.git',
    commits: [
      { message: 'first', files: { 'skills/a/SKILL.md': '---\nname: a\n---\n' } },
      { message: 'second', files: { 'skills/b/SKILL.md': '---\nname: b\n---\n' } },
    ],
    tags: [{ name: 'v1', target: 0, annotated: true }],
  });
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await root.cleanup();
  await work.cleanup();
});

describe('startGitHttpServer', () => {
  it('serves git ls-remote over protocol v2, passing the Git-Protocol header to upload-pack', async () => {
    server = await startGitHttpServer({ root: root.path });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.urlFor('skills.git')).toBe(`${server.url}/skills.git`);

    const { stdout, stderr } = await git(['-c', 'protocol.version=2', 'ls-remote', server.urlFor('skills.git')], {
      GIT_TRACE_PACKET: '1',
    });

    expect(parseLsRemote(stdout)).toEqual(await repo.refs());
    expect(stderr).toContain('< version 2');
    expect(stderr).toContain('> command=ls-refs');
    expect(
      server.stats.log.map(({ method, path, query, status, command }) => ({ method, path, query, status, command })),
    ).toEqual([
      {
        method: 'GET',
        path: '/skills.git/info/refs',
        query: 'service=git-upload-pack',
        status: 200,
        command: undefined,
      },
      { method: 'POST', path: '/skills.git/git-upload-pack', query: '', status: 200, command: 'ls-refs' },
    ]);
    expect(server.stats.log.every((entry) => entry.gitProtocol === 'version=2')).toBe(true);
  });

  it('serves git clone over protocol v2 with the files of the head commit', async () => {
    server = await startGitHttpServer({ root: root.path });
    const target = join(work.path, 'clone');

    await git(['-c', 'protocol.version=2', 'clone', '-q', server.urlFor('skills.git'), target]);

    expect((await git(['rev-parse', 'HEAD'], {}, target)).stdout.trim()).toBe(repo.head('main'));
    expect(await readFile(join(target, 'skills/b/SKILL.md'), 'utf8')).toBe('---\nname: b\n---\n');
    const posts = server.stats.log.filter((entry) => entry.method === 'POST');
    expect(posts.map((entry) => entry.command)).toEqual(['ls-refs', 'fetch']);
  });

  it('inflates gzip-encoded request bodies (git gzips POSTs over 1 KiB)', async () => {
    const many = await makeRepo({
      root: root.path,
      name: 'many.git',
      commits: Array.from({ length: 60 }, (_, i) => ({
        branch: `branch-${i}`,
        from: null,
        files: { [`f${i}`]: `${i}` },
      })),
    });
    server = await startGitHttpServer({ root: root.path });
    const target = join(work.path, 'mirror.git');

    await git(['-c', 'protocol.version=2', 'clone', '-q', '--mirror', server.urlFor('many.git'), target]);

    expect(server.stats.log.some((entry) => entry.method === 'POST' && entry.contentEncoding === 'gzip')).toBe(true);
    expect(parseLsRemote((await git(['ls-remote', target])).stdout)).toEqual(await many.refs());
  });

  it('answers 401 with a Basic challenge without a credential or with a wrong one, and serves the right one', async () => {
    server = await startGitHttpServer({ root: root.path, auth: { username: 'alice', password: 's3cret:x' } });
    const url = server.urlFor('skills.git');
    const header = (user: string, password: string) =>
      `http.extraHeader=Authorization: ${basicAuthorizationHeader(user, password)}`;

    const anonymous = await gitFails(['ls-remote', url]);
    const wrong = await gitFails(['-c', header('alice', 'nope'), 'ls-remote', url]);
    const right = await git(['-c', header('alice', 's3cret:x'), 'ls-remote', url]);

    expect(anonymous.stderr).toMatch(/terminal prompts disabled|Authentication failed|could not read Username/);
    expect(wrong.stderr).toMatch(/Authentication failed|could not read Username|terminal prompts disabled/);
    expect(parseLsRemote(right.stdout)).toEqual(await repo.refs());
    expect(server.stats.log.filter((entry) => entry.status === 401)).toHaveLength(2);
    const challenge = await rawRequest(server.port, '/skills.git/info/refs?service=git-upload-pack');
    expect(challenge.status).toBe(401);
    expect(challenge.headers['www-authenticate']).toBe('Basic realm="git"');
  });

  it('refuses pushes, even from an authenticated user', async () => {
    server = await startGitHttpServer({ root: root.path, auth: { username: 'alice', password: 'pw' } });
    const extra = `http.extraHeader=Authorization: ${basicAuthorizationHeader('alice', 'pw')}`;
    const checkout = join(work.path, 'checkout');
    await git(['-c', extra, 'clone', '-q', server.urlFor('skills.git'), checkout]);

    await gitFails(['-C', checkout, '-c', extra, 'push', 'origin', 'HEAD:refs/heads/pushed']);

    expect(server.stats.log.at(-1)).toMatchObject({ query: 'service=git-receive-pack', status: 403 });
    expect((await repo.refs())['refs/heads/pushed']).toBeUndefined();
  });

  it('accepts a predicate as auth', async () => {
    const seen: string[] = [];
    server = await startGitHttpServer({
      root: root.path,
      auth: (username, password) => {
        seen.push(username);
        return username === 'bot' && password === 'token';
      },
    });
    const extra = `http.extraHeader=Authorization: ${basicAuthorizationHeader('bot', 'token')}`;

    await git(['-c', extra, 'ls-remote', server.urlFor('skills.git')]);

    expect(seen).toContain('bot');
  });

  it('counts requests and response body bytes, and resetStats zeroes them', async () => {
    server = await startGitHttpServer({ root: root.path });
    await git(['clone', '-q', '--bare', server.urlFor('skills.git'), join(work.path, 'c.git')]);

    const { stats } = server;
    expect(stats.requests).toBe(stats.log.length);
    expect(stats.requests).toBeGreaterThanOrEqual(3);
    expect(stats.bytesServed).toBe(stats.log.reduce((sum, entry) => sum + entry.bytes, 0));
    // The fetch response carries the pack: at least its 12-byte header and 20-byte trailer.
    expect(stats.log.at(-1)!.bytes).toBeGreaterThan(32);

    server.resetStats();
    expect(server.stats).toEqual({ requests: 0, bytesServed: 0, log: [] });
    await git(['ls-remote', server.urlFor('skills.git')]);
    expect(server.stats.requests).toBe(2);
  });

  it('answers 404 for a repository that does not exist', async () => {
    server = await startGitHttpServer({ root: root.path });

    await gitFails(['ls-remote', server.urlFor('missing.git')]);

    expect(server.stats.log[0]?.status).toBe(404);
  });

  it('refuses paths that climb out of the root', async () => {
    server = await startGitHttpServer({ root: root.path });

    const response = await rawRequest(server.port, '/..%2f..%2fetc/info/refs?service=git-upload-pack');

    expect(response.status).toBe(403);
  });

  it('close() stops listening and drops kept-alive connections', async () => {
    server = await startGitHttpServer({ root: root.path });
    const { port } = server;
    await git(['ls-remote', server.urlFor('skills.git')]);

    await server.close();
    server = undefined;

    await expect(rawRequest(port, '/skills.git/info/refs')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('close() ends a request still in flight and its git http-backend process', async () => {
    server = await startGitHttpServer({ root: root.path });
    // A POST whose body never ends: http-backend waits on stdin until close() kills it.
    const stalled = request({
      host: '127.0.0.1',
      port: server.port,
      method: 'POST',
      path: '/skills.git/git-upload-pack',
      headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Transfer-Encoding': 'chunked' },
      agent: false,
    });
    const outcome = new Promise<string>((resolve) => {
      stalled.on('error', (error) => resolve(error.message));
      stalled.on('response', (res) => res.on('close', () => resolve('closed')).resume());
    });
    stalled.write('0032want 0000000000000000000000000000000000000000\n');
    await waitFor(() => server!.stats.requests === 1);

    await server.close();
    server = undefined;

    expect(await outcome).toMatch(/socket hang up|ECONNRESET|closed/);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error('condition not met within 5 s');
}

function rawRequest(port: number, path: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}
