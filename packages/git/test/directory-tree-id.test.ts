import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '@agentproto/testkit';
import { directoryTree, directoryTreeId, fetchDirectory, isomorphicGitEngine, systemGitEngine } from '../src/index.js';
import { rejection, scratch, serve } from './support/fixtures.js';
import { recordingHost, subcommand } from './support/system-git.js';

/** Many files and folders beside the skill: what the proof must not download. */
async function wideRepo() {
  const root = await scratch();
  const files: Record<string, string | Buffer> = {
    'skills/a/SKILL.md': 'a',
    'skills/a/docs/guide.md': 'guide',
    'data/big.bin': randomBytes(256 * 1024),
  };
  for (let i = 0; i < 80; i++) files[`skills/s${i}/deep/er/f.md`] = `skill ${i}`;
  const repo = await makeRepo({ root, name: 'r.git', commits: [{ files }] });
  const server = await serve({ root });
  return { repo, server, url: server.urlFor('r.git') };
}

describe('directoryTreeId: a directory named from the commit and the trees on its path', () => {
  it('gives the id directoryTree gives, from one fetch of the commit and the trees above the directory (system git)', async () => {
    const { repo, server, url } = await wideRepo();
    const commit = repo.commits[0]!;
    const walked = await directoryTree(url, commit, 'skills/a', { engine: systemGitEngine() });
    server.resetStats();
    const recording = recordingHost();
    const named = await directoryTreeId(url, commit, 'skills/a', { engine: systemGitEngine({ host: recording.host }) });
    expect(named).toEqual({ commit, tree: walked.tree, path: 'skills/a' });
    // Three processes: the gitdir, the fetch, and one cat-file loading the commit and the
    // trees on the way by name (`<commit>:skills`), with no listing first.
    expect(recording.calls.map((call) => subcommand(call.argv))).toEqual(['init', 'fetch', 'cat-file']);
    expect(recording.calls[2]?.stdin?.split('\n')).toContain(`${commit}:skills`);
    const fetches = server.stats.log.filter((r) => r.method === 'POST' && r.command === 'fetch');
    expect(fetches.map((r) => r.filter)).toEqual(['combine:blob:none+tree:2']);
    // The root's and skills/'s trees: a few KiB, not the 80 skills' trees nor any blob.
    expect(server.stats.bytesServed).toBeLessThan(32 * 1024);
    server.resetStats();
    expect((await directoryTreeId(url, commit, '', { engine: systemGitEngine() })).tree).toBe(
      (await directoryTree(url, commit, '', { engine: systemGitEngine() })).tree,
    );
  });

  it('then fetchDirectory in the same work folder fetches the directory whole by that id, with no listing first: one fetch, three processes', async () => {
    const { repo, server, url } = await wideRepo();
    const commit = repo.commits[0]!;
    const workDir = join(await scratch(), 'work');
    await mkdir(workDir, { mode: 0o700 });
    const recording = recordingHost();
    const engine = systemGitEngine({ host: recording.host });
    const { tree } = await directoryTreeId(url, commit, 'skills/a', { engine, workDir });
    recording.calls.length = 0;
    server.resetStats();
    const fetched = await fetchDirectory(url, commit, 'skills/a', join(workDir, 'out'), { engine, workDir });
    expect(fetched).toMatchObject({ tree, files: 2 });
    expect(recording.calls.map((call) => subcommand(call.argv))).toEqual(['fetch', 'ls-tree', 'cat-file']);
    expect(recording.calls[0]?.stdin?.trim()).toBe(tree);
    // The directory's trees and blobs only: not the 256 KiB file, not the other skills.
    expect(server.stats.bytesServed).toBeLessThan(16 * 1024);
  });

  it('gives the same id through an engine without partial clone', async () => {
    const { repo, url } = await wideRepo();
    const commit = repo.commits[0]!;
    expect((await directoryTreeId(url, commit, 'skills/a', { engine: isomorphicGitEngine() })).tree).toBe(
      (await directoryTree(url, commit, 'skills/a', { engine: systemGitEngine() })).tree,
    );
  });

  it('refuses a path that is a file or missing', async () => {
    const { repo, url } = await wideRepo();
    const commit = repo.commits[0]!;
    expect(
      await rejection(directoryTreeId(url, commit, 'skills/a/SKILL.md', { engine: systemGitEngine() })),
    ).toMatchObject({ code: 'GIT_NOT_A_DIRECTORY' });
    expect(await rejection(directoryTreeId(url, commit, 'skills/none', { engine: systemGitEngine() }))).toMatchObject({
      code: 'GIT_NOT_A_DIRECTORY',
      found: 'missing',
    });
  });
});
