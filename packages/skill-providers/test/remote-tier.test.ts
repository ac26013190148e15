import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StoreEvent, ociRemote, openContentStore } from '@agentproto/content-cache';
import { defineCodeWithReport, githubConnector } from '@agentproto/aip-26';
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
import { systemGitEngine } from '@agentproto/git';
import { type BasicVault, localSandbox, prepareSkills } from '@agentproto/skill-providers';
import { tempDir } from './support/temp.js';

// Two store roots stand for two machines sharing one OCI registry (Debian's CNCF
// distribution on 127.0.0.1). The origin is git over smart HTTP (`git http-backend`), which
// also stands in for GitHub: the AIP-26 connector speaks git, not GitHub's REST API.
let served: TempDir;
let registry: OciRegistry;
let git: GitHttpServer;
let skills: MadeRepo;
let tool: MadeRepo;
let password = 'right-password';
let repoCounter = 0;

const skillFiles = {
  'skills/review/SKILL.md': '---\nname: review\n---\n# review\n',
  'skills/review/scripts/check.sh': { content: '#!/bin/sh\necho ok\n', mode: 0o755 },
  'skills/review/docs/guide.md': 'guide\n',
  'README.md': 'root\n',
};

beforeAll(async () => {
  served = await sharedDir();
  const root = served.path;
  skills = await makeRepo({
    root,
    name: 'skills.git',
    commits: [{ files: skillFiles }],
    tags: [{ name: 'v1', target: 0 }],
  });
  tool = await makeRepo({
    root,
    name: 'acme/tool.git',
    commits: [
      {
        files: {
          'package.json': '{"name":"tool"}\n',
          'bin/run.sh': { content: '#!/bin/sh\n', mode: 0o755 },
          'src/index.ts': 'export {}\n',
        },
      },
    ],
  });
  git = await startGitHttpServer({
    root,
    auth: (user, pass) => (user === 'bot' || user === 'x-access-token') && pass === password,
  });
  registry = await startOciRegistry();
});

afterAll(async () => {
  await git?.close();
  await registry?.close();
  await served?.cleanup();
});

const vault: BasicVault = () => ({ username: 'bot', password: 'right-password' });

async function machine(repository: string) {
  const events: StoreEvent[] = [];
  const store = await openContentStore({
    root: join(await tempDir(), 'store'),
    remote: ociRemote({ url: registry.url, repository, allowInsecureHttp: true }),
    onEvent: (event) => events.push(event),
  });
  const sandbox = localSandbox({ privateRoot: await tempDir() });
  return { store, events, sandbox };
}

/** A GitHub source pinned to a full commit, bundled through the AIP-26 connector with the machine's store. */
async function bundleTool(store: Awaited<ReturnType<typeof machine>>['store']) {
  // System git: its trees-only fetch makes the proof of a registry's tree cheap. (With the
  // default isomorphic-git engine, which has no partial clone, the proof fetches the commit
  // whole, file content included.)
  const github = githubConnector({
    baseUrl: git.url,
    cache: store,
    token: 'right-password',
    git: { allowInsecureHttp: true, engine: systemGitEngine() },
  });
  const workspaceRoot = await tempDir();
  return defineCodeWithReport({
    workspaceRoot,
    github,
    cache: store,
    code: { sources: [{ github: { repo: 'acme/tool', ref: tool.commits[0]! } }] },
  });
}

async function filesOf(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path);
      else out[path] = await readFile(join(root, path), 'utf8');
    }
  };
  await walk('');
  return out;
}

describe('two machines sharing a store through an OCI registry', () => {
  it('machine B prepares the skill and bundles the GitHub source from the registry, fetching no file content from git', async () => {
    repoCounter += 1;
    const repository = `agentproto/machines-${process.pid}-${repoCounter}`;
    const entry = [`${git.urlFor('skills.git')}@v1#skills/review`];

    const a = await machine(repository);
    const [skillA] = await prepareSkills(entry, { cache: a.store, sandbox: a.sandbox, vault });
    const bundleA = await bundleTool(a.store);
    await a.store.remoteIdle();
    expect(skillA).toMatchObject({ from: 'origin', hit: false });
    expect(a.events.filter((e) => e.type === 'remote-warning')).toEqual([]);
    expect(a.events.filter((e) => e.type === 'remote-pushed').length).toBeGreaterThanOrEqual(2);

    const b = await machine(repository);
    git.resetStats();
    const [skillB] = await prepareSkills(entry, { cache: b.store, sandbox: b.sandbox, vault });
    const afterSkill = git.stats.log.map((r) => ({
      method: r.method,
      path: r.path,
      command: r.command,
      filter: r.filter,
    }));
    const bundleB = await bundleTool(b.store);
    const afterBundle = git.stats.log
      .slice(afterSkill.length)
      .map((r) => ({ method: r.method, path: r.path, command: r.command, filter: r.filter }));

    expect(skillB).toMatchObject({
      from: 'remote',
      hit: true,
      version: skills.commits[0],
      contentId: skillA!.contentId,
    });
    expect(await filesOf(skillB!.dir)).toEqual(await filesOf(skillA!.dir));
    expect(createHash('sha256').update(bundleB.bundle).digest('hex')).toBe(bundleA.report.sha256);
    expect(bundleB.report).toEqual(bundleA.report);

    // Every file came from the registry; git sent none. Machine B asks git for two things:
    // the skill's ref listing (the authorization check, on every preparation), and for each
    // tree taken from the registry the commit and the trees on the way to the directory,
    // without file content (filter combine:blob:none+tree:<depth>; tree:0, the commit alone,
    // for a repository's root), because the registry is believed in nothing: the
    // directory's tree id must come from the origin, and the registry's files must hash to
    // it. So one small fetch for the skill, one for the pinned GitHub source; facts the
    // registry holds are not used at all.
    const skillFetches = afterSkill.filter((r) => r.method === 'POST' && r.command !== 'ls-refs');
    expect(skillFetches.map((r) => [r.path, r.command, r.filter])).toEqual([
      ['/skills.git/git-upload-pack', 'fetch', 'combine:blob:none+tree:2'],
    ]);
    expect(
      afterSkill
        .filter((r) => !skillFetches.includes(r))
        .every(
          (r) =>
            r.path === '/skills.git/info/refs' || (r.path === '/skills.git/git-upload-pack' && r.command === 'ls-refs'),
        ),
    ).toBe(true);
    expect(afterSkill.some((r) => r.command === 'ls-refs')).toBe(true);
    const bundleFetches = afterBundle.filter((r) => r.method === 'POST');
    expect(bundleFetches).toEqual([
      { method: 'POST', path: '/acme/tool.git/git-upload-pack', command: 'fetch', filter: 'tree:0' },
    ]);
    expect(afterBundle.every((r) => r.path.startsWith('/acme/tool.git/'))).toBe(true);
    expect(b.events.filter((e) => e.type === 'remote-warning')).toEqual([]);
    expect(b.events.filter((e) => e.type === 'remote-hit').length).toBeGreaterThanOrEqual(2);
  });

  it('the registry never authorizes: a revoked credential fails on machine B though the registry holds the skill', async () => {
    repoCounter += 1;
    const repository = `agentproto/machines-${process.pid}-${repoCounter}`;
    const entry = [`${git.urlFor('skills.git')}#skills/review`];
    const a = await machine(repository);
    await prepareSkills(entry, { cache: a.store, sandbox: a.sandbox, vault });
    await a.store.remoteIdle();

    const b = await machine(repository);
    password = 'rotated';
    try {
      await expect(prepareSkills(entry, { cache: b.store, sandbox: b.sandbox, vault })).rejects.toMatchObject({
        code: 'SKILL_AUTH_FAILED',
        phase: 'resolve',
      });
    } finally {
      password = 'right-password';
    }
    // Refused before the store or its remote were consulted.
    expect(b.events).toEqual([]);
    expect((await b.store.list()).objects).toEqual([]);
  });
});
