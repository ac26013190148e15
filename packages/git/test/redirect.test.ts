import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '@agentproto/testkit';
import { listRefs, type GitAuth } from '../src/index.js';
import { scratch, serve } from './support/fixtures.js';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
}

/**
 * `/old.git/*` answers 307 to `${target}/*`; anything else is recorded and answered 404.
 * 307 keeps the method and body, so the POST of a fetch can follow too.
 */
async function redirector(
  target: (self: string) => string,
): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  let self = '';
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    req.resume();
    const rest = /^\/old\.git(\/.*)$/.exec(req.url ?? '')?.[1];
    if (rest !== undefined) {
      res.writeHead(307, { Location: `${target(self)}${rest}` });
      res.end();
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url: `${self}/old.git`, seen, close };
}

const auth: GitAuth = () => ({ Authorization: 'Bearer redirect-token-1', 'Private-Token': 'redirect-token-2' });

describe('redirects', () => {
  it('follows a redirect to another server', async () => {
    const root = await scratch();
    const repo = await makeRepo({ root, name: 'new.git', commits: [{ files: { 'a.md': 'a' } }] });
    const server = await serve({ root });
    const moved = await redirector(() => server.urlFor('new.git'));
    try {
      const refs = await listRefs(moved.url);
      expect(refs.refs.find((ref) => ref.name === 'refs/heads/main')?.oid).toBe(repo.commits[0]);
    } finally {
      await moved.close();
    }
  });

  it('keeps every credential header on a redirect within the same origin', async () => {
    const moved = await redirector((self) => `${self}/new.git`);
    try {
      await expect(listRefs(moved.url, { auth })).rejects.toMatchObject({ code: 'GIT_REPOSITORY_NOT_FOUND' });
      const landed = moved.seen.find((entry) => entry.path.startsWith('/new.git/'));
      expect(landed?.headers.authorization).toBe('Bearer redirect-token-1');
      expect(landed?.headers['private-token']).toBe('redirect-token-2');
    } finally {
      await moved.close();
    }
  });

  it('drops every credential header, not only Authorization, when a redirect leaves the origin', async () => {
    const elsewhere = await redirector(() => 'unused');
    const moved = await redirector(() => elsewhere.url.replace('/old.git', '/new.git'));
    try {
      await expect(listRefs(moved.url, { auth })).rejects.toMatchObject({ code: 'GIT_REPOSITORY_NOT_FOUND' });
      expect(moved.seen[0]?.headers.authorization).toBe('Bearer redirect-token-1');
      expect(elsewhere.seen).toHaveLength(1);
      expect(elsewhere.seen[0]?.headers.authorization).toBeUndefined();
      expect(elsewhere.seen[0]?.headers['private-token']).toBeUndefined();
    } finally {
      await moved.close();
      await elsewhere.close();
    }
  });

  it('gives up after 10 redirects', async () => {
    const loop = await redirector((self) => `${self}/old.git`);
    try {
      await expect(listRefs(loop.url)).rejects.toMatchObject({ code: 'GIT_TRANSPORT', reason: 'TOO_MANY_REDIRECTS' });
      expect(loop.seen).toHaveLength(11);
    } finally {
      await loop.close();
    }
  });
});
