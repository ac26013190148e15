import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HttpClient } from 'isomorphic-git';
import { request as nodeRequest } from 'isomorphic-git/http/node';
import { makeRepo } from '@agentproto/testkit';
import { fetchDirectory, isomorphicGitEngine, listRefs, type GitEngine } from '../src/index.js';
import { rejection, scratch, serve } from './support/fixtures.js';

async function setup() {
  const root = await scratch();
  const work = await scratch();
  const repo = await makeRepo({
    root,
    name: 'r.git',
    commits: [
      { files: { 'skills/a/SKILL.md': 'a', 'skills/a/more.md': 'more', 'other/x.bin': Buffer.alloc(256 * 1024, 1) } },
    ],
  });
  const server = await serve({ root });
  const privateDir = join(work, 'private');
  await mkdir(privateDir);
  return {
    work,
    server,
    privateDir,
    url: server.urlFor('r.git'),
    commit: repo.commits[0] as string,
    dest: join(work, 'out'),
  };
}

/** The node client, with a hook on every request (and on the first chunk of each response body). */
function hookedHttp(hook: { onRequest?(method: string): void; onFirstChunk?(method: string): void }): HttpClient {
  return {
    async request(request) {
      hook.onRequest?.(request.method ?? 'GET');
      const response = await nodeRequest(request);
      const body = response.body;
      if (!body || !hook.onFirstChunk) return response;
      let first = true;
      const iterator: AsyncIterableIterator<Uint8Array> = {
        async next() {
          const item = await body.next();
          if (first && !item.done) {
            first = false;
            hook.onFirstChunk?.(request.method ?? 'GET');
          }
          return item;
        },
        async return() {
          await body.return?.();
          return { done: true, value: undefined };
        },
        [Symbol.asyncIterator]: () => iterator,
      };
      return { ...response, body: iterator };
    },
  };
}

describe('abort', () => {
  it('an aborted signal stops everything before the first request', async () => {
    const { server, privateDir, url, commit, dest } = await setup();
    const signal = AbortSignal.abort(new Error('changed my mind'));
    await expect(listRefs(url, { signal })).rejects.toMatchObject({ code: 'GIT_ABORTED' });
    const error = await rejection(fetchDirectory(url, commit, 'skills/a', dest, { signal, privateDir }));
    expect(error).toMatchObject({ code: 'GIT_ABORTED', operation: 'fetchDirectory' });
    expect((error as { cause?: Error }).cause?.message).toBe('changed my mind');
    expect(server.stats.requests).toBe(0);
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
  });

  it('aborting as the pack is requested leaves no temporary folder and no destination', async () => {
    const { privateDir, url, commit, dest } = await setup();
    const controller = new AbortController();
    const http = hookedHttp({ onRequest: (method) => method === 'POST' && controller.abort() });
    const error = await rejection(
      fetchDirectory(url, commit, 'skills/a', dest, { signal: controller.signal, http, privateDir }),
    );
    expect(error).toMatchObject({ code: 'GIT_ABORTED' });
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
  });

  it('aborting while the pack is arriving leaves no temporary folder and no destination', async () => {
    const { privateDir, url, commit, dest } = await setup();
    const controller = new AbortController();
    const http = hookedHttp({ onFirstChunk: (method) => method === 'POST' && controller.abort() });
    const error = await rejection(
      fetchDirectory(url, commit, 'skills/a', dest, { signal: controller.signal, http, privateDir }),
    );
    expect(error).toMatchObject({ code: 'GIT_ABORTED' });
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
  });

  it('aborting after the fetch, before writing, removes the destination too', async () => {
    const { privateDir, url, commit, dest } = await setup();
    const controller = new AbortController();
    const real = isomorphicGitEngine();
    const engine: GitEngine = {
      ...real,
      async fetchCommit(request) {
        const reader = await real.fetchCommit(request);
        controller.abort();
        return reader;
      },
    };
    const error = await rejection(
      fetchDirectory(url, commit, 'skills/a', dest, { signal: controller.signal, engine, privateDir }),
    );
    expect(error).toMatchObject({ code: 'GIT_ABORTED' });
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
  });

  it('aborting a request the server never answers returns at once', async () => {
    const work = await scratch();
    const privateDir = join(work, 'private');
    await mkdir(privateDir);
    const stalled: Server = createServer(() => {
      // Never answers.
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/r.git`;
    try {
      const started = Date.now();
      const refs = rejection(listRefs(url, { signal: AbortSignal.timeout(200) }));
      const fetched = rejection(
        fetchDirectory(url, 'a'.repeat(40), '', join(work, 'out'), { signal: AbortSignal.timeout(200), privateDir }),
      );
      expect(await refs).toMatchObject({ code: 'GIT_ABORTED' });
      expect(await fetched).toMatchObject({ code: 'GIT_ABORTED' });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(existsSync(join(work, 'out'))).toBe(false);
      expect(await readdir(privateDir)).toEqual([]);
    } finally {
      stalled.closeAllConnections();
      await new Promise<void>((resolve) => stalled.close(() => resolve()));
    }
  });
});
