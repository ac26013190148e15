import { join } from 'node:path';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import {
  makeRepo,
  startGitHttpServer,
  tempDir,
  type GitHttpServer,
  type MadeRepo,
  type TempDir,
} from '@agentproto/testkit';
import { directoryTree, expandCommit, isomorphicGitEngine, systemGitEngine, type GitEngine } from '../src/index.js';
import { rejection, scratch } from './support/fixtures.js';

/**
 * Enough commits that two of them share their first 4 hex digits (with 1200 ids among
 * 65536 prefixes a collision is all but certain, and makeRepo's ids are the same on every
 * machine), plus a branch force-moved away from a commit that stays on the server.
 */
const COMMITS = 1200;

let dir: TempDir;
let server: GitHttpServer;
let repo: MadeRepo;
let url: string;

beforeAll(async () => {
  dir = await tempDir('agentproto-git-expand-');
  repo = await makeRepo({
    root: dir.path,
    name: 'history.git',
    commits: [
      ...Array.from({ length: COMMITS }, (_, index) => ({ files: { 'n.txt': String(index) } })),
      // On a branch that is then moved back: this commit is on the server but no ref reaches it.
      { branch: 'gone', files: { 'gone.txt': 'unreachable' } },
    ],
    branches: [{ name: 'gone', from: 0 }],
    tags: [{ name: 'v1', target: 10, annotated: true }],
  });
  server = await startGitHttpServer({ root: dir.path });
  url = server.urlFor('history.git');
});

afterAll(async () => {
  await server?.close();
  await dir?.cleanup();
});

/** A 4-hex prefix that several commits share, and those commits. */
function collision(): { prefix: string; commits: string[] } {
  const byPrefix = new Map<string, string[]>();
  for (const commit of repo.commits.slice(0, COMMITS)) {
    const prefix = commit.slice(0, 4);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), commit]);
  }
  const found = [...byPrefix].find(([, commits]) => commits.length > 1);
  if (!found) throw new Error('no colliding prefix: make more commits');
  return { prefix: found[0], commits: found[1].sort() };
}

describe.each([
  ['system-git', () => systemGitEngine()],
  ['isomorphic-git', () => isomorphicGitEngine()],
] as Array<[string, () => GitEngine]>)('expandCommit with the %s engine', (_name, makeEngine) => {
  it('expands a unique prefix, in either case, to the full commit id', async () => {
    const engine = makeEngine();
    const commit = repo.commits[42] as string;
    expect(await expandCommit(url, commit.slice(0, 12), { engine })).toBe(commit);
    expect(await expandCommit(url, commit.slice(0, 12).toUpperCase(), { engine })).toBe(commit);
  });

  it('lists every candidate of an ambiguous prefix (GIT_AMBIGUOUS_COMMIT)', async () => {
    const { prefix, commits } = collision();
    const error = await rejection(expandCommit(url, prefix, { engine: makeEngine() }));
    expect(error).toMatchObject({ code: 'GIT_AMBIGUOUS_COMMIT', prefix, candidates: commits, url });
  });

  it('finds no commit for the prefix of a blob, or of a commit no branch or tag reaches (GIT_COMMIT_NOT_FOUND)', async () => {
    const engine = makeEngine();
    const blob = (await repo.git('rev-parse', `${repo.commits[7]}:n.txt`)).trim();
    const commitPrefixes = new Set(repo.commits.map((commit) => commit.slice(0, 10)));
    expect(commitPrefixes.has(blob.slice(0, 10))).toBe(false);
    await expect(expandCommit(url, blob.slice(0, 10), { engine })).rejects.toMatchObject({
      code: 'GIT_COMMIT_NOT_FOUND',
    });
    const unreachable = repo.commits[COMMITS] as string;
    expect((await repo.git('cat-file', '-t', unreachable)).trim()).toBe('commit');
    await expect(expandCommit(url, unreachable.slice(0, 10), { engine })).rejects.toMatchObject({
      code: 'GIT_COMMIT_NOT_FOUND',
      prefix: unreachable.slice(0, 10),
    });
  });

  it('reaches commits through annotated tags too', async () => {
    const engine = makeEngine();
    const tagged = repo.commits[10] as string;
    expect(await expandCommit(url, tagged.slice(0, 9), { engine })).toBe(tagged);
  });

  it('works in a workDir that already holds a shallow fetch of one commit', async () => {
    const engine = makeEngine();
    const workDir = await scratch();
    await directoryTree(url, repo.commits[5] as string, '', { engine, workDir });
    expect(await expandCommit(url, (repo.commits[3] as string).slice(0, 10), { engine, workDir })).toBe(
      repo.commits[3],
    );
    // And the other way round: the history is there, the trees of a commit are fetched when asked.
    const tree = await directoryTree(url, repo.commits[3] as string, '', { engine, workDir });
    expect(tree.tree).toBe(await repo.treeOf(3));
  });
});

describe('expandCommit arguments', () => {
  it.each([
    ['abc', 'GIT_INVALID_COMMIT_ID'],
    ['xyz12345', 'GIT_INVALID_COMMIT_ID'],
    ['', 'GIT_INVALID_COMMIT_ID'],
    ['ABCDEF0123456789ABCDEF0123456789ABCDEF01', 'GIT_UPPERCASE_SHA'],
  ])('refuses %j before sending anything (%s)', async (prefix, code) => {
    const before = server.stats.requests;
    await expect(expandCommit(url, prefix, { engine: systemGitEngine() })).rejects.toMatchObject({ code });
    expect(server.stats.requests).toBe(before);
  });

  it('returns a full id as it is, without the network', async () => {
    const before = server.stats.requests;
    const full = repo.commits[1] as string;
    expect(await expandCommit(url, full, { engine: systemGitEngine() })).toBe(full);
    expect(server.stats.requests).toBe(before);
  });

  it('refuses an engine that cannot search history', async () => {
    const { findCommits: _unused, ...engine } = systemGitEngine();
    await expect(expandCommit(url, 'abcd', { engine })).rejects.toMatchObject({
      code: 'GIT_INVALID_ARGUMENT',
      argument: 'engine',
    });
  });

  it('fetches commits only with the system engine: far fewer bytes than the whole history', async () => {
    const workDir = join(await scratch(), 'w');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(workDir, { mode: 0o700 });
    server.resetStats();
    await expandCommit(url, (repo.commits[100] as string).slice(0, 12), { engine: systemGitEngine(), workDir });
    const withFilter = server.stats.bytesServed;
    server.resetStats();
    await expandCommit(url, (repo.commits[100] as string).slice(0, 12), { engine: isomorphicGitEngine() });
    expect(withFilter).toBeLessThan(server.stats.bytesServed);
  });
});
