import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeRepo,
  startGitHttpServer,
  tempDir,
  type FileTree,
  type GitHttpServer,
  type TempDir,
} from '@agentproto/testkit';
import {
  directoryTree,
  expandCommit,
  fetchDirectory,
  isomorphicGitEngine,
  systemGitEngine,
  type FetchLimits,
  type GitEngine,
} from '../../src/index.js';
import { DEFAULT_FETCH_LIMITS } from '../../src/limits.js';
import { rejection, scratch } from '../support/fixtures.js';

const MiB = 1024 * 1024;
/** What packBudget allows for a cap: the cap, 1/64 of it, and 1 MiB for the commit and trees. */
const packBudget = (maxBytes: number) => maxBytes + Math.ceil(maxBytes / 64) + MiB;

/** Bytes of every regular file under `dir` (0 when it does not exist). */
async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const stat = await lstat(path);
      if (stat.isDirectory()) total += await bytesUnder(path);
      else if (stat.isFile()) total += stat.size;
    } catch {
      // Removed while we looked: the fetch is cleaning up.
    }
  }
  return total;
}

/** The largest file anywhere under `dir`. */
async function largestFileUnder(dir: string): Promise<number> {
  let largest = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name);
    const stat = await lstat(path).catch(() => undefined);
    if (stat?.isDirectory()) largest = Math.max(largest, await largestFileUnder(path));
    else if (stat?.isFile()) largest = Math.max(largest, stat.size);
  }
  return largest;
}

/** Runs `fetch` while measuring `dest` every few milliseconds; the largest size seen. */
async function watchingSize<T>(
  dest: string,
  fetch: () => Promise<T>,
): Promise<{ outcome: T | Error; maxSeen: number }> {
  let maxSeen = 0;
  let done = false;
  const watcher = (async () => {
    while (!done) {
      maxSeen = Math.max(maxSeen, await bytesUnder(dest));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  let outcome: T | Error;
  try {
    outcome = await fetch();
  } catch (error) {
    outcome = error as Error;
  }
  done = true;
  await watcher;
  maxSeen = Math.max(maxSeen, await bytesUnder(dest));
  return { outcome, maxSeen };
}

/** Folders 40 deep, past the default depth cap of 32. */
const DEEP = Array.from({ length: 39 }, () => 'd').join('/');

async function shapesRepo(root: string) {
  const files: FileTree = { 'ok/SKILL.md': 'ok', [`deep/${DEEP}/SKILL.md`]: 'deep' };
  for (let i = 0; i < 60; i += 1) files[`wide/f${String(i).padStart(3, '0')}.txt`] = `file ${i}`;
  // Compressible: 12 × 512 KiB = 6 MiB of files in a pack of a few KiB, so no transfer cap
  // stops them; only the byte count of the directory can.
  for (let i = 0; i < 12; i += 1)
    files[`many/f${String(i).padStart(2, '0')}.bin`] = Buffer.alloc(512 * 1024, `pattern ${i} `);
  return makeRepo({ root, name: 'shapes.git', commits: [{ files }] });
}

async function bombRepo(root: string) {
  // 64 MiB of zeros: a pack of some 64 KiB, far below any transfer cap, that inflates to 64 MiB.
  return makeRepo({
    root,
    name: 'bomb.git',
    commits: [{ files: { 'bomb/zeros.bin': Buffer.alloc(64 * MiB), 'bomb/SKILL.md': 'x' } }],
  });
}

async function bigRepo(root: string) {
  // 6 MiB that does not compress: the pack that carries it is as large.
  return makeRepo({
    root,
    name: 'big.git',
    commits: [{ files: { 'big/blob.bin': randomBytes(6 * MiB), 'small/SKILL.md': 'small' } }],
  });
}

const engines: Array<[string, () => GitEngine]> = [
  ['isomorphic-git', () => isomorphicGitEngine()],
  ['system-git', () => systemGitEngine()],
  ['system-git, HTTP in-process', () => systemGitEngine({ httpInProcess: true })],
];

/** Both repositories, made and served once for the whole file. */
let served: { root: TempDir; server: GitHttpServer; shapes: string; big: string; bomb: string };

beforeAll(async () => {
  const root = await tempDir('agentproto-git-limits-');
  const [shapes, big, bomb] = await Promise.all([shapesRepo(root.path), bigRepo(root.path), bombRepo(root.path)]);
  const server = await startGitHttpServer({ root: root.path });
  served = {
    root,
    server,
    shapes: shapes.commits[0] as string,
    big: big.commits[0] as string,
    bomb: bomb.commits[0] as string,
  };
}, 60_000);

afterAll(async () => {
  await served?.server.close();
  await served?.root.cleanup();
});

describe.each(engines)('fetch limits (%s)', (engineName, makeEngine) => {
  async function setup(_make: unknown, name: 'shapes.git' | 'big.git') {
    const work = await scratch();
    const privateDir = await mkdtemp(join(work, 'private-'));
    const commit = name === 'shapes.git' ? served.shapes : served.big;
    return { commit, url: served.server.urlFor(name), server: served.server, work, privateDir };
  }

  async function refuse(
    url: string,
    commit: string,
    path: string,
    limits: FetchLimits | undefined,
    work: string,
    privateDir: string,
  ) {
    const dest = join(work, 'out');
    const { outcome, maxSeen } = await watchingSize(dest, () =>
      fetchDirectory(url, commit, path, dest, { engine: makeEngine(), privateDir, ...(limits ? { limits } : {}) }),
    );
    expect(outcome).toBeInstanceOf(Error);
    // Nothing is left: no destination, no private work folder.
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
    return { error: outcome as Error & Record<string, unknown>, maxSeen };
  }

  it('refuses a directory of more entries than maxFiles, counted from the trees, writing nothing', async () => {
    const { url, commit, work, privateDir } = await setup(shapesRepo, 'shapes.git');
    const { error, maxSeen } = await refuse(url, commit, 'wide', { maxFiles: 50 }, work, privateDir);
    expect(error).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'files', max: 50, url, path: 'wide' });
    expect(error.message).toContain(url);
    expect(maxSeen).toBe(0);
  });

  it('refuses a path deeper than the default depth cap of 32, writing nothing', async () => {
    const { url, commit, work, privateDir } = await setup(shapesRepo, 'shapes.git');
    expect(DEFAULT_FETCH_LIMITS.maxDepth).toBe(32);
    const { error, maxSeen } = await refuse(url, commit, 'deep', undefined, work, privateDir);
    expect(error).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'depth', max: 32, url, path: 'deep' });
    expect(maxSeen).toBe(0);
  });

  it('refuses a directory of more bytes than maxBytes, and the destination never holds more than the cap', async () => {
    const { url, commit, work, privateDir } = await setup(shapesRepo, 'shapes.git');
    const { error, maxSeen } = await refuse(url, commit, 'many', { maxBytes: 2 * MiB }, work, privateDir);
    expect(error).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'bytes', max: 2 * MiB, url, path: 'many' });
    expect(maxSeen).toBeLessThanOrEqual(2 * MiB);
    // The system engine knows the sizes once the blobs are fetched: nothing at all is written.
    if (engineName.startsWith('system-git')) expect(maxSeen).toBe(0);
  });

  it('stops the pack of a large blob at the transfer cap: neither the destination nor the private gitdir grows past it', async () => {
    const { url, commit, work } = await setup(bigRepo, 'big.git');
    const workDir = await mkdtemp(join(work, 'work-'));
    const dest = join(work, 'out');
    const maxBytes = MiB;
    const { outcome, maxSeen } = await watchingSize(dest, () =>
      fetchDirectory(url, commit, 'big', dest, { engine: makeEngine(), workDir, limits: { maxBytes } }),
    );
    expect(outcome).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'bytes', max: maxBytes, url, path: 'big' });
    expect((outcome as Error).cause).toMatchObject({ code: 'GIT_PACK_TOO_LARGE', max: packBudget(maxBytes) });
    expect(maxSeen).toBe(0);
    expect(existsSync(dest)).toBe(false);
    // The pack stopped at the cap as it arrived (system git: RLIMIT_FSIZE on index-pack;
    // isomorphic-git: the response body is cut and nothing is written).
    expect(await largestFileUnder(join(workDir, 'git'))).toBeLessThanOrEqual(packBudget(maxBytes));
  });

  it('refuses a small pack that inflates past the byte cap (a compressed bomb) before any of it is inflated whole or written', async () => {
    const work = await scratch();
    const dest = join(work, 'out');
    const url = served.server.urlFor('bomb.git');
    const maxBytes = 8 * MiB;
    const { outcome, maxSeen } = await watchingSize(dest, () =>
      fetchDirectory(url, served.bomb, 'bomb', dest, { engine: makeEngine(), limits: { maxBytes } }),
    );
    expect(outcome).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'bytes', max: maxBytes, url, path: 'bomb' });
    // isomorphic-git: the pack's object sizes are read before it indexes (inflates) them;
    // system git: cat-file --batch-check gives the blob's size before it is read.
    if (engineName === 'isomorphic-git') expect((outcome as Error).cause).toMatchObject({ code: 'GIT_PACK_TOO_LARGE' });
    expect(maxSeen).toBe(0);
    expect(existsSync(dest)).toBe(false);
  });

  it('fetches a directory within every cap', async () => {
    const { url, commit, work } = await setup(shapesRepo, 'shapes.git');
    // isomorphic-git fetches and unpacks the whole commit (6 MiB of files elsewhere in it),
    // so its byte cap must hold the commit; system git fetches only the directory's blobs.
    const maxBytes = engineName.startsWith('system-git') ? 1000 : 16 * MiB;
    const out = await fetchDirectory(url, commit, 'wide', join(work, 'out'), {
      engine: makeEngine(),
      limits: { maxFiles: 60, maxBytes, maxDepth: 1 },
    });
    expect(out).toMatchObject({ files: 60 });
  });

  it('directoryTree refuses a tree past the entry and depth caps before any file content is fetched', async () => {
    const { url, commit } = await setup(shapesRepo, 'shapes.git');
    const wide = await rejection(
      directoryTree(url, commit, 'wide', { engine: makeEngine(), limits: { maxFiles: 10 } }),
    );
    expect(wide).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'files', max: 10 });
    const deep = await rejection(directoryTree(url, commit, 'deep', { engine: makeEngine() }));
    expect(deep).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'depth', max: 32 });
  });
});

describe('fetch limits: what each engine transfers', () => {
  it('system git fetches a small directory of a repository larger than the cap (only its blobs travel)', async () => {
    const work = await scratch();
    const out = await fetchDirectory(served.server.urlFor('big.git'), served.big, 'small', join(work, 'out'), {
      engine: systemGitEngine(),
      limits: { maxBytes: MiB },
    });
    expect(out.bytes).toBe(5);
  });

  it('system git on a machine without prlimit still fetches, and still refuses a directory past the byte cap from its blob sizes', async () => {
    // A PATH holding only git and sh: prlimit is not there, so the engine runs git without it.
    const work = await scratch();
    const bin = join(work, 'bin');
    await mkdir(bin);
    for (const program of ['git', 'sh'])
      await symlink(
        execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim(),
        join(bin, program),
      );
    const engine = systemGitEngine({ path: bin });
    const out = await fetchDirectory(served.server.urlFor('big.git'), served.big, 'small', join(work, 'out'), {
      engine,
      limits: { maxBytes: MiB },
    });
    expect(out.bytes).toBe(5);
    const error = await rejection(
      fetchDirectory(served.server.urlFor('big.git'), served.big, '', join(work, 'all'), {
        engine,
        limits: { maxBytes: MiB },
      }),
    );
    expect(error).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'bytes' });
    expect(existsSync(join(work, 'all'))).toBe(false);
  });

  it('isomorphic-git, which fetches the whole commit, refuses it when the commit is past the transfer cap', async () => {
    const work = await scratch();
    const error = await rejection(
      fetchDirectory(served.server.urlFor('big.git'), served.big, 'small', join(work, 'out'), {
        limits: { maxBytes: MiB },
      }),
    );
    expect(error).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'bytes', path: 'small' });
  });

  it('expandCommit caps the history it fetches: isomorphic-git (every blob of the history) is stopped, system git (commits only) is not', async () => {
    const url = served.server.urlFor('big.git');
    const prefix = served.big.slice(0, 8);
    const error = await rejection(expandCommit(url, prefix, { limits: { maxBytes: MiB } }));
    expect(error).toMatchObject({ code: 'GIT_LIMIT_EXCEEDED', limit: 'bytes', max: MiB, url });
    expect(error.cause).toMatchObject({ code: 'GIT_PACK_TOO_LARGE' });
    expect(await expandCommit(url, prefix, { engine: systemGitEngine(), limits: { maxBytes: MiB } })).toBe(served.big);
  });

  it('refuses a cap that is not a non-negative integer before anything is fetched', async () => {
    const work = await scratch();
    const error = await rejection(
      fetchDirectory('http://127.0.0.1:9/x.git', 'a'.repeat(40), '', join(work, 'out'), { limits: { maxBytes: -1 } }),
    );
    expect(error).toMatchObject({ code: 'GIT_INVALID_ARGUMENT', argument: 'limits.maxBytes' });
    expect(existsSync(join(work, 'out'))).toBe(false);
  });
});
