import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { basicAuthorizationHeader, isolatedGitEnv, makeRepo, parseLsRemote, run } from '@agentproto/testkit';
import { directoryTree, fetchDirectory, listRefs, systemGitEngine, type GitAuth } from '../src/index.js';
import { asLsRemote, listTree, rejection, scratch, serve } from './support/fixtures.js';
import { recordingHost, subcommand } from './support/system-git.js';

const BIG = 4 * 1024 * 1024;
/** 120 small files in one folder of the directory: reading them must not cost a process each. */
const MANY = Object.fromEntries(
  Array.from({ length: 120 }, (_, index) => [`skills/a/many/${index}.md`, `file ${index}`]),
);

/** A skill directory next to a large unrelated file, then a commit that changes only the outside. */
async function bigRepo() {
  const root = await scratch();
  const repo = await makeRepo({
    root,
    name: 'r.git',
    commits: [
      {
        files: {
          'data/big.bin': randomBytes(BIG),
          'skills/a/SKILL.md': 'a',
          'skills/a/run.sh': { content: '#!/bin/sh\necho a\n', executable: true },
          'skills/a/docs/guide.md': 'guide',
          'skills/a/link': { symlink: 'docs/guide.md' },
          'skills/b/SKILL.md': 'b',
          ...MANY,
        },
      },
      { files: { 'README.md': 'outside the directory' } },
    ],
  });
  const server = await serve({ root });
  return { repo, server, url: server.urlFor('r.git') };
}

/** The blob ids under `dir` at `commit`, as git lists them. */
async function blobsUnder(
  repo: { git(...args: string[]): Promise<string> },
  commit: string,
  dir: string,
): Promise<string[]> {
  const listing = await repo.git('ls-tree', '-r', commit, '--', `${dir}/`);
  return listing
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(/\s+/)[2] as string)
    .sort();
}

describe('system-git engine over HTTP', () => {
  it('lists refs as git ls-remote does: annotated and lightweight tags, peeled lines, HEAD with its symref', async () => {
    const root = await scratch();
    const repo = await makeRepo({
      root,
      name: 'skills.git',
      commits: [
        { files: { 'skills/a/SKILL.md': 'a' } },
        { branch: 'dev', files: { 'skills/b/SKILL.md': 'b' } },
        { branch: 'main', files: { 'x.md': 'x' } },
      ],
      tags: [
        { name: 'v1', target: 0, annotated: true },
        { name: 'v2', target: 'main' },
      ],
      head: 'dev',
    });
    const server = await serve({ root });
    const url = server.urlFor('skills.git');
    const listed = await listRefs(url, { engine: systemGitEngine() });
    const { stdout } = await run('git', ['ls-remote', url], { env: isolatedGitEnv() });
    expect(asLsRemote(listed)).toEqual(parseLsRemote(stdout));
    expect(listed.refs.find((ref) => ref.name === 'HEAD')).toEqual({
      name: 'HEAD',
      oid: repo.head('dev'),
      symref: 'refs/heads/dev',
    });
    const v1 = listed.refs.find((ref) => ref.name === 'refs/tags/v1');
    expect(v1?.peeled).toBe(repo.commits[0]);
    expect(v1?.oid).not.toBe(repo.commits[0]);
    expect(listed.refs.find((ref) => ref.name === 'refs/tags/v2')).toEqual({
      name: 'refs/tags/v2',
      oid: repo.commits[2],
    });
    // Protocol v2, as configured.
    expect(server.stats.log.every((entry) => entry.gitProtocol === 'version=2')).toBe(true);
  });

  it('writes exactly the directory, with modes and links, and fetches no blob outside it', async () => {
    const { repo, server, url } = await bigRepo();
    const work = await scratch();
    const dest = join(work, 'out');
    const result = await fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest, {
      engine: systemGitEngine(),
    });
    const written = await listTree(dest);
    expect(written).toMatchObject({
      'SKILL.md': 'file 644 a',
      docs: 'dir',
      'docs/guide.md': 'file 644 guide',
      link: 'link docs/guide.md',
      'run.sh': 'file 755 #!/bin/sh\necho a\n',
      'many/7.md': 'file 644 file 7',
    });
    expect(Object.keys(written)).toHaveLength(5 + 1 + 120);
    expect(result).toMatchObject({ tree: await repo.treeOf(0, 'skills/a'), files: 123, symlinks: 1 });
    // Two fetches (the commit with the trees on the way, then the directory whole: its
    // trees and blobs): no tree outside the path travels, and the 4 MiB file never does.
    expect(server.stats.bytesServed).toBeLessThan(64 * 1024);
    expect(server.stats.log.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      'GET /r.git/info/refs',
      'POST /r.git/git-upload-pack',
      'GET /r.git/info/refs',
      'POST /r.git/git-upload-pack',
    ]);
  });

  it("directoryTree fetches no file content; fetchDirectory with the same workDir then fetches only the directory's blobs", async () => {
    const { repo, server, url } = await bigRepo();
    const work = await scratch();
    const workDir = join(work, 'shared');
    await mkdir(workDir, { mode: 0o700 });
    const recording = recordingHost();
    const engine = systemGitEngine({ host: recording.host });
    const commit = repo.commits[0] as string;

    const tree = await directoryTree(url, commit, 'skills/a', { engine, workDir });
    expect(tree).toEqual({ commit, tree: await repo.treeOf(0, 'skills/a'), path: 'skills/a' });
    expect(server.stats.bytesServed).toBeLessThan(16 * 1024);
    expect(recording.calls.some((call) => call.argv.includes('--filter=blob:none'))).toBe(true);

    server.resetStats();
    recording.calls.length = 0;
    const dest = join(work, 'out');
    const result = await fetchDirectory(url, commit, 'skills/a', dest, { engine, workDir });
    expect(result.tree).toBe(tree.tree);
    expect((await listTree(dest))['docs/guide.md']).toBe('file 644 guide');
    // One fetch, by id, of exactly the directory's blobs: nothing of the commit again.
    const fetches = recording.calls.filter((call) => subcommand(call.argv) === 'fetch');
    expect(fetches).toHaveLength(1);
    expect(fetches[0]?.argv).toContain('--stdin');
    const asked = (fetches[0]?.stdin ?? '')
      .split('\n')
      .filter((line) => line !== '')
      .sort();
    expect(asked).toEqual(await blobsUnder(repo, commit, 'skills/a'));
    expect(server.stats.log.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      'GET /r.git/info/refs',
      'POST /r.git/git-upload-pack',
    ]);
    expect(server.stats.bytesServed).toBeLessThan(16 * 1024);
    // Reads never spawn one process per object: a few cat-file runs (per tree level, per
    // batch of blobs) for the commit, 5 trees and 124 blobs.
    expect(asked).toHaveLength(124);
    // directoryTree's walk is reused: fetchDirectory neither checks the gitdir nor walks
    // the trees again; it fetches the blobs, sizes them and loads them.
    expect(recording.calls.map((call) => subcommand(call.argv))).toEqual(['fetch', 'cat-file', 'cat-file']);
    // The work folder is the caller's: left in place, the gitdir inside it.
    expect(existsSync(join(workDir, 'git'))).toBe(true);
  });

  it("fetchDirectory in a work folder no directoryTree walked: fetches the path's trees, then the directory whole by its tree id: 2 fetches, no cat-file --batch-check", async () => {
    const { repo, url } = await bigRepo();
    const work = await scratch();
    const workDir = join(work, 'fresh');
    await mkdir(workDir, { mode: 0o700 });
    const commit = repo.commits[0] as string;
    const recording = recordingHost();
    const result = await fetchDirectory(url, commit, 'skills/a', join(work, 'out'), {
      engine: systemGitEngine({ host: recording.host }),
      workDir,
    });
    expect(result.tree).toBe(await repo.treeOf(0, 'skills/a'));
    const commands = recording.calls.map((call) => subcommand(call.argv));
    const fetches = recording.calls.filter((call) => subcommand(call.argv) === 'fetch');
    // The commit with the trees down to the directory's parent, then the directory's tree
    // by id with no filter: its subtree and its blobs in one pack, nothing else.
    expect(fetches).toHaveLength(2);
    expect(fetches[0]?.argv).toContain('--filter=combine:blob:none+tree:2');
    expect(fetches[1]?.stdin?.trim()).toBe(await repo.treeOf(0, 'skills/a'));
    expect(fetches[1]?.argv.some((arg) => arg.startsWith('--filter'))).toBe(false);
    expect(fetches[1]?.argv.some((arg) => arg.includes('partialclonefilter'))).toBe(false);
    // A listing of the empty work folder, the gitdir made, the path's trees fetched, a
    // listing naming the directory's tree, the directory fetched, a listing of its trees and
    // blob sizes (no cat-file --batch-check), one cat-file loading the trees and the blobs
    // (within the byte cap and one batch).
    expect(commands).toEqual(['ls-tree', 'init', 'fetch', 'ls-tree', 'fetch', 'ls-tree', 'cat-file']);
    expect(recording.calls.filter((call) => call.argv.includes('-l'))).toHaveLength(1);
  });

  it('gives the same tree id after the branch moved by a commit outside the directory', async () => {
    const { repo, url } = await bigRepo();
    const engine = systemGitEngine();
    const before = await directoryTree(url, repo.commits[0] as string, 'skills/a', { engine });
    const after = await directoryTree(url, repo.commits[1] as string, 'skills/a/', { engine });
    expect(after.tree).toBe(before.tree);
    expect(after.commit).not.toBe(before.commit);
    expect(after.path).toBe('skills/a');
  });

  it('directoryTree refuses a path that is not a directory, and an unknown commit', async () => {
    const { repo, url } = await bigRepo();
    const engine = systemGitEngine();
    await expect(directoryTree(url, repo.commits[0] as string, 'skills/a/SKILL.md', { engine })).rejects.toMatchObject({
      code: 'GIT_NOT_A_DIRECTORY',
      found: 'file',
    });
    await expect(directoryTree(url, repo.commits[0] as string, 'nope', { engine })).rejects.toMatchObject({
      code: 'GIT_NOT_A_DIRECTORY',
      found: 'missing',
    });
    const missing = '0123456789abcdef0123456789abcdef01234567';
    await expect(directoryTree(url, missing, 'skills', { engine })).rejects.toMatchObject({
      code: 'GIT_COMMIT_UNAVAILABLE',
      commit: missing,
    });
  });

  it('reading an object the gitdir lacks never fetches it (no lazy fetch), and the gitdir config names no promisor', async () => {
    const { repo, server, url } = await bigRepo();
    const workDir = await scratch();
    const engine = systemGitEngine();
    const commit = repo.commits[0] as string;
    await directoryTree(url, commit, 'skills/a', { engine, workDir });
    server.resetStats();
    // The gitdir holds the commit and the trees of skills/a: a second request is served
    // without the network.
    const reader = await engine.fetchCommit({
      url,
      headers: {},
      signal: undefined,
      workDir,
      gitdir: join(workDir, 'git'),
      commit,
      blobs: false,
    });
    await reader.preloadTrees?.(commit, 'skills/a');
    const big = (await repo.git('rev-parse', `${commit}:data/big.bin`)).trim();
    expect(await reader.read(big)).toBeUndefined();
    expect((await reader.read(commit))?.type).toBe('commit');
    expect(server.stats.requests).toBe(0);
    const config = await readFile(join(workDir, 'git', 'config'), 'utf8');
    expect(config).not.toMatch(/promisor|partialclone|\[remote/i);
    // `git init --template=`: no sample hooks.
    expect(existsSync(join(workDir, 'git', 'hooks'))).toBe(false);
  });

  it('refuses a redirect: the headers would follow it', async () => {
    const { url } = await bigRepo();
    const { createServer } = await import('node:http');
    const redirecting = createServer((req, res) => {
      res.writeHead(301, { Location: `${url}${(req.url ?? '').replace(/^\/old\.git/, '')}` });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const port = (redirecting.address() as { port: number }).port;
    try {
      const error = await rejection(listRefs(`http://127.0.0.1:${port}/old.git`, { engine: systemGitEngine() }));
      expect(error).toMatchObject({ code: 'GIT_TRANSPORT' });
    } finally {
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });

  it('reports a missing repository and an unreachable server with typed errors', async () => {
    const root = await scratch();
    const server = await serve({ root });
    const engine = systemGitEngine();
    await expect(listRefs(server.urlFor('nope.git'), { engine })).rejects.toMatchObject({
      code: 'GIT_REPOSITORY_NOT_FOUND',
    });
    const url = server.urlFor('r.git');
    await server.close();
    const error = await rejection(listRefs(url, { engine }));
    expect(error).toMatchObject({ code: 'GIT_TRANSPORT', url });
    expect(String(error.reason)).toMatch(/connect/i);
    expect((error.cause as { name?: string }).name).toBe('GitCommandError');
  });
});

describe('system-git engine with HTTP Basic auth', () => {
  const PASSWORD = 'CANARY-Basic-Pass-7b1e';

  async function protectedRepo() {
    const root = await scratch();
    const repo = await makeRepo({
      root,
      name: 'private.git',
      commits: [{ files: { 'skills/a/SKILL.md': 'a', 'other.md': 'o' } }],
    });
    const server = await serve({ root, auth: { username: 'alice', password: PASSWORD } });
    return { repo, server, url: server.urlFor('private.git') };
  }

  it('fetches with the right credentials, and writes them only to a 0600 file in the work folder', async () => {
    const { repo, url } = await protectedRepo();
    const work = await scratch();
    const workDir = join(work, 'w');
    await mkdir(workDir, { mode: 0o700 });
    const recording = recordingHost();
    const auth: GitAuth = () => ({ Authorization: basicAuthorizationHeader('alice', PASSWORD) });
    const engine = systemGitEngine({ host: recording.host });
    const refs = await listRefs(url, { engine, auth, workDir });
    expect(refs.refs.find((ref) => ref.name === 'refs/heads/main')?.oid).toBe(repo.commits[0]);
    const result = await fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(work, 'out'), {
      engine,
      auth,
      workDir,
    });
    expect(result.files).toBe(1);

    expect(recording.files.length).toBeGreaterThan(0);
    for (const file of recording.files) {
      expect(file.mode).toBe(0o600);
      expect(file.path.startsWith(`${workDir}/`)).toBe(true);
      expect((await stat(file.path)).mode & 0o777).toBe(0o600);
      expect(await readFile(file.path, 'utf8')).toContain('extraHeader = "Authorization: Basic ');
    }
    // Every command that talked to the server was pointed at one of those files, by path.
    const network = recording.calls.filter((call) => ['ls-remote', 'fetch'].includes(subcommand(call.argv) ?? ''));
    expect(network.length).toBeGreaterThanOrEqual(3);
    for (const call of network) expect(recording.files.map((file) => file.path)).toContain(call.env.GIT_CONFIG_GLOBAL);
    // Commands on the gitdir alone get no credentials at all.
    for (const call of recording.calls.filter((call) => !network.includes(call)))
      expect(call.env.GIT_CONFIG_GLOBAL).toBe('/dev/null');
  });

  it.each([
    ['missing', undefined],
    ['wrong', { Authorization: basicAuthorizationHeader('alice', 'not-the-password') }],
  ])('fails with GIT_AUTH_FAILED (401) when the credentials are %s, and leaves nothing', async (_what, headers) => {
    const { repo, url } = await protectedRepo();
    const work = await scratch();
    const privateDir = join(work, 'private');
    await mkdir(privateDir);
    const engine = systemGitEngine();
    const auth: GitAuth | undefined = headers === undefined ? undefined : () => headers;
    const options = { engine, privateDir, ...(auth ? { auth } : {}) };
    await expect(listRefs(url, options)).rejects.toMatchObject({ code: 'GIT_AUTH_FAILED', status: 401, url });
    const dest = join(work, 'out');
    await expect(fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest, options)).rejects.toMatchObject({
      code: 'GIT_AUTH_FAILED',
      status: 401,
    });
    await expect(directoryTree(url, repo.commits[0] as string, 'skills/a', options)).rejects.toMatchObject({
      code: 'GIT_AUTH_FAILED',
    });
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
  });
});
