import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { basicAuthorizationHeader, makeRepo } from '@agentproto/testkit';
import { fetchDirectory, isomorphicGitEngine, listRefs, type GitAuth } from '../src/index.js';
import { rejection, scratch, serve } from './support/fixtures.js';

const CANARY = 'CANARY-SECRET-123';

async function protectedRepo() {
  const root = await scratch();
  const work = await scratch();
  const repo = await makeRepo({ root, name: 'private.git', commits: [{ files: { 'skills/a/SKILL.md': 'a' } }] });
  const server = await serve({ root, auth: { username: 'alice', password: 'correct-horse' } });
  return { work, repo, server, url: server.urlFor('private.git') };
}

/** Every way an error gets printed or logged, causes and hidden properties included. */
function renderings(error: Error): string[] {
  return [
    error.message,
    String(error),
    JSON.stringify(error),
    JSON.stringify({ ...error }),
    error.stack ?? '',
    inspect(error, { depth: Infinity, showHidden: true }),
  ];
}

/** A server that is not git: it answers every request with the Authorization header it got. */
async function echoServer(status: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    res.writeHead(status, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Basic realm="echo"' });
    res.end(`you sent: ${req.headers.authorization ?? '(nothing)'}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/repo.git`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('credentials', () => {
  it('gets 401 without credentials: GIT_AUTH_FAILED', async () => {
    const { url } = await protectedRepo();
    await expect(listRefs(url)).rejects.toMatchObject({ code: 'GIT_AUTH_FAILED', status: 401, url });
  });

  it('sends the headers auth returns, and succeeds with the right ones', async () => {
    const { work, repo, url } = await protectedRepo();
    const seen: string[] = [];
    const auth: GitAuth = async (forUrl) => {
      seen.push(forUrl);
      return { Authorization: basicAuthorizationHeader('alice', 'correct-horse') };
    };
    const refs = await listRefs(`${url}/`, { auth });
    expect(refs.refs.find((ref) => ref.name === 'refs/heads/main')?.oid).toBe(repo.commits[0]);
    const result = await fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(work, 'out'), { auth });
    expect(result.files).toBe(1);
    // Called once per operation, with the normalized URL.
    expect(seen).toEqual([url, url]);
  });

  it('fails a fetch without credentials and leaves nothing behind', async () => {
    const { work, repo, url } = await protectedRepo();
    const dest = join(work, 'out');
    const error = await rejection(fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest));
    expect(error).toMatchObject({ code: 'GIT_AUTH_FAILED', status: 401 });
    expect(existsSync(dest)).toBe(false);
  });

  it.each([
    ['user and password', (host: string) => `http://alice:correct-horse@${host}/private.git`, 'correct-horse'],
    ['a token as user name', (host: string) => `http://ghp_TOKENVALUE1234@${host}/private.git`, 'ghp_TOKENVALUE1234'],
  ])('refuses a URL with %s before sending anything, without echoing it', async (_what, make, secret) => {
    const { work, repo, server } = await protectedRepo();
    const url = make(`127.0.0.1:${server.port}`);
    for (const attempt of [
      listRefs(url),
      fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(work, 'out')),
    ]) {
      const error = await rejection(attempt);
      expect(error).toMatchObject({ code: 'GIT_URL_HAS_CREDENTIALS' });
      for (const text of renderings(error)) expect(text).not.toContain(secret);
    }
    expect(server.stats.requests).toBe(0);
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it(`never puts the header value into an error: a canary (${CANARY}) sent to a server that wants other credentials`, async () => {
    const { work, repo, server, url } = await protectedRepo();
    const auth: GitAuth = () => ({ Authorization: `Bearer ${CANARY}` });
    const errors = [
      await rejection(listRefs(url, { auth })),
      await rejection(fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(work, 'out'), { auth })),
    ];
    for (const error of errors) {
      expect(error).toMatchObject({ code: 'GIT_AUTH_FAILED', status: 401 });
      for (const text of renderings(error)) expect(text).not.toContain(CANARY);
    }
    expect(server.stats.log.every((entry) => entry.status === 401)).toBe(true);
  });

  it.each([401, 403, 500, 200])('never lets a server echo the credential into an error (HTTP %i)', async (status) => {
    const echo = await echoServer(status);
    try {
      const auth: GitAuth = () => ({ Authorization: `Bearer ${CANARY}` });
      const work = await scratch();
      const errors = [
        await rejection(listRefs(echo.url, { auth })),
        await rejection(fetchDirectory(echo.url, 'a'.repeat(40), '', join(work, 'out'), { auth })),
      ];
      for (const error of errors) {
        expect(error.code).toMatch(/^GIT_(AUTH_FAILED|TRANSPORT)$/);
        for (const text of renderings(error)) expect(text).not.toContain(CANARY);
      }
    } finally {
      await echo.close();
    }
  });

  it('never echoes a Basic password, decoded or not', async () => {
    const echo = await echoServer(401);
    try {
      const auth: GitAuth = () => ({ Authorization: basicAuthorizationHeader('alice', CANARY) });
      const error = await rejection(listRefs(echo.url, { auth }));
      const encoded = basicAuthorizationHeader('alice', CANARY).slice('Basic '.length);
      for (const text of renderings(error)) {
        expect(text).not.toContain(CANARY);
        expect(text).not.toContain(encoded);
      }
    } finally {
      await echo.close();
    }
  });

  it.each([
    ['a value with a line break', { Authorization: `Bearer ${CANARY}\r\nX-Evil: 1` }],
    ['a name that is not a token', { 'Bad Header': CANARY }],
    ['a protocol header', { 'Git-Protocol': CANARY }],
    ['a value that is not a string', { Authorization: 42 as unknown as string }],
  ])('refuses auth headers with %s, naming the header but never its value', async (_what, headers) => {
    const { server, url } = await protectedRepo();
    const error = await rejection(listRefs(url, { auth: () => headers }));
    expect(error).toMatchObject({ code: 'GIT_INVALID_ARGUMENT', argument: 'auth' });
    for (const text of renderings(error)) expect(text).not.toContain(CANARY);
    expect(server.stats.requests).toBe(0);
  });

  it("passes what the host's auth callback throws through unchanged", async () => {
    const { url } = await protectedRepo();
    const mine = new Error('vault locked');
    await expect(listRefs(url, { auth: () => Promise.reject(mine) })).rejects.toBe(mine);
  });

  it('refuses `http` together with `engine`: the client belongs to the engine', async () => {
    const { url } = await protectedRepo();
    const engine = isomorphicGitEngine();
    await expect(
      listRefs(url, { engine, http: { request: async () => ({ url, statusCode: 500, statusMessage: 'x' }) } }),
    ).rejects.toMatchObject({
      code: 'GIT_INVALID_ARGUMENT',
    });
  });
});
