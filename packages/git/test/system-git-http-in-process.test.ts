import { randomBytes } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolatedGitEnv, makeRepo, parseLsRemote, run } from '@agentproto/testkit';
import { directoryTree, fetchDirectory, listRefs, systemGitEngine } from '../src/index.js';
import { asLsRemote, listTree, rejection, scratch, serve } from './support/fixtures.js';
import { recordingHost, subcommand } from './support/system-git.js';

/**
 * systemGitEngine({ httpInProcess: true }): each fetch over HTTP is one protocol v2 `fetch`
 * POST made by this process, its pack indexed by `git index-pack`. Against the testkit's
 * `git http-backend` server for what git does, and against a hostile server (a node HTTP
 * server answering crafted bytes, named as such) for what an attacker sends.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise<void>((done) => server.close(() => done()));
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function repoWith(files: Record<string, string | Buffer>) {
  const root = await scratch();
  const repo = await makeRepo({
    root,
    name: 'r.git',
    commits: [{ files }, { files: { 'README.md': 'outside the directory' } }],
  });
  return { repo, root };
}

/** The files of a skill and of its neighbours. */
const FILES = {
  'skills/a/SKILL.md': 'a',
  'skills/a/docs/guide.md': 'guide',
  'skills/a/docs/more/deep.md': 'deep',
  'skills/b/SKILL.md': 'b',
  'data/other.txt': 'other',
};

const pkt = (line: string | Buffer) => {
  const bytes = typeof line === 'string' ? Buffer.from(line) : line;
  return Buffer.concat([Buffer.from((bytes.length + 4).toString(16).padStart(4, '0')), bytes]);
};
const band = (n: number, bytes: Buffer | string) => pkt(Buffer.concat([Buffer.from([n]), Buffer.from(bytes)]));
const V2_ADVERTISEMENT = Buffer.concat([
  pkt('version 2\n'),
  pkt('agent=git/2.39.5\n'),
  pkt('ls-refs=unborn\n'),
  pkt('fetch=shallow wait-for-done filter\n'),
  pkt('object-format=sha1\n'),
  Buffer.from('0000'),
]);

/** A hostile server: a correct v2 advertisement, then `answer` to every POST; it records every request. */
async function hostile(answer: (res: ServerResponse, body: string) => void, advertise?: (res: ServerResponse) => void) {
  const seen: Array<{ method: string; url: string; authorization: string | undefined; body: string }> = [];
  const url = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body });
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
        if (advertise) advertise(res);
        else res.end(V2_ADVERTISEMENT);
      } else {
        res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result' });
        answer(res, body);
      }
    });
  });
  return { url: `${url}/r.git`, seen };
}

const COMMIT = '0123456789abcdef0123456789abcdef01234567';

/** fetchCommit of COMMIT with its root tree, in a fresh work folder: what the hostile cases call. */
async function fetchFrom(url: string, options: { headers?: Record<string, string>; signal?: AbortSignal } = {}) {
  const workDir = await scratch();
  const gitdir = join(workDir, 'git');
  const recording = recordingHost();
  const engine = systemGitEngine({ host: recording.host, httpInProcess: true });
  const error = await rejection(
    engine.fetchCommit({
      url,
      headers: options.headers ?? {},
      workDir,
      gitdir,
      commit: COMMIT,
      blobs: false,
      treeDepth: 1,
      signal: options.signal,
    }),
  );
  return { error, gitdir, recording };
}

/** Every file name under the gitdir's pack folder. */
async function packFiles(gitdir: string): Promise<string[]> {
  return existsSync(join(gitdir, 'objects', 'pack')) ? (await readdir(join(gitdir, 'objects', 'pack'))).sort() : [];
}

describe('system-git engine, HTTP spoken in-process', () => {
  it('fetches what git fetch fetches: one GET of the capabilities per call and one POST per fetch, git indexing each pack', async () => {
    const { repo, root } = await repoWith(FILES);
    const server = await serve({ root });
    const url = server.urlFor('r.git');
    const commit = repo.commits[0] as string;
    const work = await scratch();

    const viaGit = join(work, 'via-git');
    await fetchDirectory(url, commit, 'skills/a', viaGit, { engine: systemGitEngine() });

    server.resetStats();
    const recording = recordingHost();
    const workDir = join(work, 'fresh');
    await mkdir(workDir, { mode: 0o700 });
    const dest = join(work, 'in-process');
    const result = await fetchDirectory(url, commit, 'skills/a', dest, {
      engine: systemGitEngine({ host: recording.host, httpInProcess: true }),
      workDir,
    });
    expect(result.tree).toBe(await repo.treeOf(0, 'skills/a'));
    expect(await listTree(dest)).toEqual(await listTree(viaGit));
    // No git fetch and no HTTP helper: git only indexes the two packs and reads (the gitdir
    // is made in-process, and git reads it as its own).
    expect(recording.calls.map((call) => subcommand(call.argv))).toEqual([
      'ls-tree',
      'index-pack',
      'ls-tree',
      'index-pack',
      'ls-tree',
      'cat-file',
    ]);
    expect(recording.calls.some((call) => call.argv.some((arg) => arg.includes('://')))).toBe(false);
    expect(server.stats.log.map((entry) => `${entry.method} ${entry.command ?? ''} ${entry.filter ?? ''}`)).toEqual([
      'GET  ',
      'POST fetch combine:blob:none+tree:2',
      'POST fetch ',
    ]);
    // The commit is recorded as shallow, as git fetch --depth=1 records it; every pack has its index.
    expect((await readFile(join(workDir, 'git', 'shallow'), 'utf8')).trim()).toBe(commit);
    const packs = await packFiles(join(workDir, 'git'));
    expect(packs.filter((name) => name.endsWith('.pack'))).toHaveLength(2);
    for (const pack of packs.filter((name) => name.endsWith('.pack'))) {
      expect(packs).toContain(pack.replace(/\.pack$/, '.idx'));
      expect(packs).toContain(pack.replace(/\.pack$/, '.promisor'));
    }
  });

  it('lists refs as git ls-remote does, with one GET and one ls-refs POST; the fetch that follows in the same work folder asks no capabilities again', async () => {
    const root = await scratch();
    const repo = await makeRepo({
      root,
      name: 'r.git',
      commits: [
        { files: FILES },
        { branch: 'dev', files: { 'x.md': 'x' } },
        { branch: 'main', files: { 'y.md': 'y' } },
      ],
      tags: [
        { name: 'v1', target: 0, annotated: true },
        { name: 'v2', target: 'main' },
      ],
      head: 'dev',
    });
    const server = await serve({ root });
    const url = server.urlFor('r.git');
    const recording = recordingHost();
    const engine = systemGitEngine({ host: recording.host, httpInProcess: true });
    const workDir = await scratch();
    const listed = await listRefs(url, { engine, workDir });
    const requests = server.stats.log.map((entry) => `${entry.method} ${entry.command ?? ''}`);
    const { stdout } = await run('git', ['ls-remote', url], { env: isolatedGitEnv() });
    expect(asLsRemote(listed)).toEqual(parseLsRemote(stdout));
    expect(listed.refs.find((ref) => ref.name === 'HEAD')).toMatchObject({ symref: 'refs/heads/dev' });
    expect(listed.refs.find((ref) => ref.name === 'refs/tags/v1')).toMatchObject({ peeled: repo.commits[0] });
    expect(recording.calls).toEqual([]);
    expect(requests).toEqual(['GET ', 'POST ls-refs']);
    server.resetStats();
    // The trees on the way, then the directory's own: two fetches, and no GET before them.
    await directoryTree(url, repo.commits[0] as string, 'skills/a', { engine, workDir });
    expect(server.stats.log.map((entry) => `${entry.method} ${entry.command ?? ''}`)).toEqual([
      'POST fetch',
      'POST fetch',
    ]);
  });

  it('refuses a ref listing with an error line, or one whose names are not git ref names', async () => {
    const bad = await hostile((res) => res.end(pkt('ERR access denied\n')));
    const engine = systemGitEngine({ httpInProcess: true });
    expect(await rejection(listRefs(bad.url, { engine }))).toMatchObject({ code: 'GIT_TRANSPORT' });
    const forged = await hostile((res) =>
      res.end(Buffer.concat([pkt(`${COMMIT} refs/heads/../../escape\n`), Buffer.from('0000')])),
    );
    expect(await rejection(listRefs(forged.url, { engine }))).toMatchObject({ code: 'GIT_TRANSPORT' });
    const cut = await hostile((res) => res.end(pkt(`${COMMIT} refs/heads/main\n`)));
    expect(await rejection(listRefs(cut.url, { engine }))).toMatchObject({ code: 'GIT_TRANSPORT' });
  });

  it('answers directoryTree and then fetches only the blobs, as with git fetch', async () => {
    const { repo, root } = await repoWith(FILES);
    const server = await serve({ root });
    const url = server.urlFor('r.git');
    const commit = repo.commits[0] as string;
    const workDir = await scratch();
    const engine = systemGitEngine({ httpInProcess: true });
    const tree = await directoryTree(url, commit, 'skills/a', { engine, workDir });
    expect(tree.tree).toBe(await repo.treeOf(0, 'skills/a'));
    server.resetStats();
    const dest = join(await scratch(), 'out');
    await fetchDirectory(url, commit, 'skills/a', dest, { engine, workDir });
    expect(await listTree(dest)).toMatchObject({ 'SKILL.md': 'file 644 a', 'docs/more/deep.md': 'file 644 deep' });
    // The same work folder: the capabilities directoryTree read a moment ago are still known, one POST and no GET.
    expect(server.stats.log.map((entry) => `${entry.method} ${entry.command ?? ''} ${entry.filter ?? ''}`)).toEqual([
      'POST fetch blob:none',
    ]);
    // Other credentials ask again, in the same work folder.
    server.resetStats();
    await fetchDirectory(url, commit, 'skills/b', join(await scratch(), 'out'), {
      engine,
      workDir,
      auth: () => ({ 'X-Other': 'other-credential' }),
    });
    expect(server.stats.log.filter((entry) => entry.method === 'GET')).toHaveLength(1);
    // So does another work folder.
    server.resetStats();
    await fetchDirectory(url, commit, 'skills/b', join(await scratch(), 'out'), { engine, workDir: await scratch() });
    expect(server.stats.log.filter((entry) => entry.method === 'GET')).toHaveLength(1);
  });

  it('leaves a server without protocol v2 to git fetch', async () => {
    const { repo, root } = await repoWith(FILES);
    const server = await serve({ root });
    // A proxy that drops the Git-Protocol header: http-backend then speaks protocol v0.
    const upstream = new URL(server.url);
    const proxy = await listen((req, res) => {
      const headers = { ...req.headers };
      delete headers['git-protocol'];
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(forward);
    });
    const recording = recordingHost();
    const dest = join(await scratch(), 'out');
    const result = await fetchDirectory(`${proxy}/r.git`, repo.commits[0] as string, 'skills/a', dest, {
      engine: systemGitEngine({ host: recording.host, httpInProcess: true }),
    });
    expect(result.tree).toBe(await repo.treeOf(0, 'skills/a'));
    const listed = await listRefs(`${proxy}/r.git`, {
      engine: systemGitEngine({ host: recording.host, httpInProcess: true }),
    });
    expect(listed.refs.find((ref) => ref.name === 'refs/heads/main')?.oid).toBe(repo.commits[1]);
    expect(recording.calls.some((call) => subcommand(call.argv) === 'ls-remote')).toBe(true);
    expect(recording.calls.some((call) => subcommand(call.argv) === 'fetch')).toBe(true);
    expect(recording.calls.some((call) => subcommand(call.argv) === 'index-pack')).toBe(false);
    expect(server.stats.log.some((entry) => entry.gitProtocol !== undefined)).toBe(false);
  });

  it('stops a pack at the cap: GIT_LIMIT_EXCEEDED, the transfer cut short, no pack file left', async () => {
    const big = randomBytes(16 * 1024 * 1024);
    const { repo, root } = await repoWith({ ...FILES, 'skills/a/blob.bin': big });
    const server = await serve({ root });
    const url = server.urlFor('r.git');
    const workDir = await scratch();
    const error = await rejection(
      fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(await scratch(), 'out'), {
        engine: systemGitEngine({ httpInProcess: true }),
        workDir,
        limits: { maxBytes: 1024 * 1024 },
      }),
    );
    expect(error).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'bytes' });
    // The pack file never grew past the cap (what git's RLIMIT_FSIZE cap promises too).
    expect(error.cause).toMatchObject({ code: 'GIT_PACK_TOO_LARGE' });
    // The commit's pack is there, indexed; the blobs' pack was removed when the cap stopped it.
    const packs = await packFiles(join(workDir, 'git'));
    for (const pack of packs.filter((name) => name.endsWith('.pack')))
      expect(packs).toContain(pack.replace(/\.pack$/, '.idx'));
  });

  it('refuses wrong credentials with GIT_AUTH_FAILED, and a careless server echoing them shows nothing of them', async () => {
    const canary = `canary-${randomBytes(12).toString('hex')}`;
    const { repo, root } = await repoWith(FILES);
    const server = await serve({
      root,
      auth: { username: 'bot', password: canary },
      echoCredentials: { status: 401, text: (sent) => `refused ${sent.authorization} ${sent.password}` },
    });
    const url = server.urlFor('r.git');
    const good = { Authorization: `Basic ${Buffer.from(`bot:${canary}`).toString('base64')}` };
    const dest = join(await scratch(), 'out');
    const auth = () => good;
    await fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest, {
      engine: systemGitEngine({ httpInProcess: true }),
      auth,
    });
    expect(await listTree(dest)).toMatchObject({ 'SKILL.md': 'file 644 a' });
    const wrong = `${canary}-wrong`;
    const error = await rejection(
      fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(await scratch(), 'out'), {
        engine: systemGitEngine({ httpInProcess: true }),
        auth: () => ({ Authorization: `Basic ${Buffer.from(`bot:${wrong}`).toString('base64')}` }),
      }),
    );
    expect(error).toMatchObject({ code: 'GIT_AUTH_FAILED', status: 401 });
    const shown = JSON.stringify({ error, message: error.message, cause: String(error.cause), stack: error.stack });
    expect(shown).not.toContain(canary);
  });

  it('refuses an error the server sends on the side band, with the credentials it echoes redacted', async () => {
    const canary = `canary-${randomBytes(12).toString('hex')}`;
    const authorization = `Bearer ${canary}`;
    const { url } = await hostile((res, body) => {
      const auth = /authorization/i.test(body) ? '' : authorization;
      res.end(Buffer.concat([pkt('packfile\n'), band(3, `denied for ${auth} ${canary}\n`), Buffer.from('0000')]));
    });
    const { error, gitdir } = await fetchFrom(url, { headers: { Authorization: authorization } });
    expect(error).toMatchObject({ code: 'GIT_TRANSPORT' });
    expect(error.message).toContain('denied for');
    expect(JSON.stringify({ error, message: error.message, cause: String(error.cause) })).not.toContain(canary);
    expect(await packFiles(gitdir)).toEqual([]);
    // The same echo as a section name the client does not know.
    const echo = await hostile((res) => res.end(Buffer.concat([pkt(`${canary}\n`), Buffer.from('0000')])));
    const second = await fetchFrom(echo.url, { headers: { Authorization: authorization } });
    expect(second.error).toMatchObject({ code: 'GIT_TRANSPORT' });
    expect(second.error.message).toContain('unknown section');
    expect(JSON.stringify({ error: second.error, message: second.error.message })).not.toContain(canary);
  });

  it('reports a want the server refuses (ERR not our ref) as GIT_COMMIT_UNAVAILABLE', async () => {
    const { url } = await hostile((res) => res.end(pkt(`ERR upload-pack: not our ref ${COMMIT}\n`)));
    const { error } = await fetchFrom(url);
    expect(error).toMatchObject({ code: 'GIT_COMMIT_UNAVAILABLE', commit: COMMIT });
  });

  it.each([
    [
      'a pkt-line longer than 65520 bytes',
      () => Buffer.concat([pkt('packfile\n'), Buffer.from('fff5'), Buffer.alloc(65521)]),
    ],
    ['a length that is not hex', () => Buffer.from('zzzzpackfile\n')],
    ['a section git does not know', () => Buffer.concat([pkt('surprise\n'), Buffer.from('0000')])],
    [
      'a response that ends inside the pack',
      () => Buffer.concat([pkt('packfile\n'), band(1, Buffer.from('PACK\0\0\0\x02'))]),
    ],
    [
      'a response with no pack',
      () => Buffer.concat([pkt('shallow-info\n'), pkt(`shallow ${COMMIT}\n`), Buffer.from('0000')]),
    ],
    ['an unknown side band', () => Buffer.concat([pkt('packfile\n'), band(7, 'x'), Buffer.from('0000')])],
    [
      'a pack git does not accept (bad checksum)',
      () =>
        Buffer.concat([
          pkt('packfile\n'),
          band(1, Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 0]), randomBytes(20)])),
          Buffer.from('0000'),
        ]),
    ],
  ])('refuses %s with GIT_TRANSPORT and leaves no pack file', async (_name, bytes) => {
    const { url } = await hostile((res) => res.end(bytes()));
    const { error, gitdir } = await fetchFrom(url);
    expect(error).toMatchObject({ code: 'GIT_TRANSPORT' });
    expect(await packFiles(gitdir)).toEqual([]);
  });

  it.each([
    ['a page that is not git', (res: ServerResponse) => res.end('<html>sign in</html>')],
    [
      'capability lines without end',
      (res: ServerResponse) => {
        res.write(pkt('version 2\n'));
        const line = pkt(`x-${'y'.repeat(60000)}\n`);
        const more = () => {
          while (!res.destroyed) if (!res.write(line)) return void res.once('drain', more);
        };
        res.on('close', () => res.destroy());
        more();
      },
    ],
  ])('refuses a capability advertisement that is %s with GIT_TRANSPORT, before any POST', async (_name, advertise) => {
    const { url, seen } = await hostile(() => undefined, advertise);
    const { error } = await fetchFrom(url);
    expect(error).toMatchObject({ code: 'GIT_TRANSPORT' });
    expect(seen.filter((request) => request.method === 'POST')).toEqual([]);
  });

  it('refuses a flood of progress lines once past 1 MiB, and stops reading there', async () => {
    let sentWhenClosed = -1;
    const { url } = await hostile((res) => {
      res.write(pkt('packfile\n'));
      const line = band(2, Buffer.alloc(60000, 0x61));
      let sent = 0;
      let closed = false;
      res.on('close', () => {
        closed = true;
        sentWhenClosed = sent;
      });
      const more = () => {
        while (!closed && sent < 256 * 1024 * 1024) {
          sent += line.length;
          if (!res.write(line)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    const { error } = await fetchFrom(url);
    expect(error).toMatchObject({ code: 'GIT_TRANSPORT' });
    expect(error.message).toContain('too long');
    await new Promise((done) => setTimeout(done, 200));
    // The connection was dropped after about 1 MiB (plus what the sockets buffer), not read to its end.
    expect(sentWhenClosed).toBeGreaterThan(0);
    expect(sentWhenClosed).toBeLessThan(32 * 1024 * 1024);
  });

  it('never follows a redirect, so the credentials never reach another server', async () => {
    const canary = `canary-${randomBytes(12).toString('hex')}`;
    const elsewhere: string[] = [];
    const other = await listen((req, res) => {
      elsewhere.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.end();
    });
    const url = await listen((_req, res) => {
      res.writeHead(302, { location: `${other}/r.git/info/refs?service=git-upload-pack` });
      res.end();
    });
    const { error } = await fetchFrom(`${url}/r.git`, { headers: { Authorization: `Bearer ${canary}` } });
    expect(error).toMatchObject({ code: 'GIT_TRANSPORT', status: 302 });
    expect(elsewhere).toEqual([]);
  });

  it('aborts mid-pack at once: the signal reason, the connection closed, no pack file left', async () => {
    let closed = false;
    const controller = new AbortController();
    const { url } = await hostile((res) => {
      res.write(Buffer.concat([pkt('packfile\n'), band(1, Buffer.concat([Buffer.from('PACK'), Buffer.alloc(1000)]))]));
      res.on('close', () => {
        closed = true;
      });
      setTimeout(() => controller.abort(new Error('stop now')), 200);
    });
    const started = Date.now();
    const { error, gitdir } = await fetchFrom(url, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(String(error.message)).toContain('stop now');
    expect(await packFiles(gitdir)).toEqual([]);
    await new Promise((done) => setTimeout(done, 100));
    expect(closed).toBe(true);
  });
});
