import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';
import {
  type GitHttpServer,
  type MadeRepo,
  type TempDir,
  makeRepo,
  startGitHttpServer,
  tempDir,
} from '@agentproto/testkit';
import { type Code, SourceResolutionError, defineCodeWithReport, scanCode, writeBundle } from '../../src/index.js';
import {
  GithubRefNotFoundError,
  PinRequiredError,
  type ResolvedGithubRef,
  githubConnector,
} from '../../src/github/connector.js';
import { extractWithGnuTar, makeWorkspace, tempDir as scratchDir } from '../support/workspace.js';

// The GitHub stand-in: real bare repositories served by `git http-backend` on 127.0.0.1
// (testkit's startGitHttpServer). githubConnector speaks git smart HTTP, so the refs it
// sees are exactly what `git ls-remote` lists, and moving a ref on the server is a real
// `git tag -f` / `git branch -f` in the served repository.
let root: TempDir;
let server: GitHttpServer;
let tool: MadeRepo;
let hexy: MadeRepo;

const TOOL = 'acme/tool';
const HEXY = 'acme/hexy';
const HOUR = 3600_000;

beforeAll(async () => {
  root = await tempDir();
  tool = await makeRepo({
    root: root.path,
    name: `${TOOL}.git`,
    commits: [
      { message: 'one', files: { 'version.txt': 'one\n' } },
      { message: 'two', files: { 'version.txt': 'two\n' } },
      { message: 'three', files: { 'version.txt': 'three\n' } },
    ],
    tags: [
      { name: 'stable', target: 0 },
      { name: 'v1.2', target: 0 },
      { name: 'v2', target: 0, annotated: true },
    ],
  });
  // Names of branches and tags that look like abbreviated commits.
  hexy = await makeRepo({
    root: root.path,
    name: `${HEXY}.git`,
    commits: [
      { message: 'main', files: { 'from.txt': 'main\n' } },
      { branch: 'cafe1234', message: 'on the branch cafe1234', files: { 'from.txt': 'branch cafe1234\n' } },
      { branch: 'v1.2', message: 'on the branch v1.2', files: { 'from.txt': 'branch v1.2\n' } },
    ],
    tags: [{ name: 'c0ffee42', target: 0 }],
  });
  server = await startGitHttpServer({ root: root.path });
});

afterAll(async () => {
  await server?.close();
  await root?.cleanup();
});

/** A source of one repository at `ref`, its whole tree. */
const at = (repo: string, ref: string): Code => ({ sources: [{ github: { repo, ref } }] });

async function fileAt(
  github: ReturnType<typeof githubConnector>,
  repo: string,
  ref: string,
  file: string,
): Promise<{ text: string | undefined; commit: string | undefined }> {
  const { bundle, report } = await defineCodeWithReport({
    workspaceRoot: await makeWorkspace({}),
    github,
    code: at(repo, ref),
  });
  return { text: (await extractWithGnuTar(bundle)).get(file)?.text, commit: report.sources[0]!.commit };
}

describe('AIP-26 "Cache invalidation for github sources": the policy follows the ref\'s shape, read conservatively', () => {
  // aip-26.md, "Cache invalidation for github sources": "| anything else | (default) |
  // Refetched on every scan — branches are mutable |". `stable` is not of the shape
  // `^v[0-9]+(\.[0-9]+)*$`, so even though the server lists it as a tag, it is re-resolved.
  it('"anything else … Refetched on every scan": a tag named `stable` moved on the server is seen on the next scan', async () => {
    let now = 1_000_000;
    const resolved: ResolvedGithubRef[] = [];
    const github = githubConnector({
      baseUrl: server.url,
      cache: false,
      clock: () => now,
      onResolved: (r) => resolved.push(r),
    });
    expect(await fileAt(github, TOOL, 'stable', 'version.txt')).toEqual({ text: 'one\n', commit: tool.commits[0] });
    await tool.git('tag', '-f', 'stable', tool.commits[1]!);
    now += 60_000;
    server.resetStats();
    expect(await fileAt(github, TOOL, 'stable', 'version.txt')).toEqual({ text: 'two\n', commit: tool.commits[1] });
    expect(server.stats.requests).toBeGreaterThan(0);
    expect(resolved.map((r) => [r.kind, r.commit, r.cached])).toEqual([
      ['tag', tool.commits[0], false],
      ['tag', tool.commits[1], false],
    ]);
  });

  // aip-26.md, same table: "| `vN.N.N` or `vN` | regex `^v[0-9]+(\.[0-9]+)*$` | Cached 24h,
  // refetched after — tags MAY move |"; ADAPTER.md: "Resolve via …/git/refs/tags/{ref} → SHA.
  // Cache 24h, refetch after."
  it('"`vN.N.N` or `vN` … Cached 24h, refetched after": a moved tag `v1.2` is served from the cache within 24 h, then re-resolved', async () => {
    let now = 5_000_000;
    const resolved: ResolvedGithubRef[] = [];
    const github = githubConnector({
      baseUrl: server.url,
      cache: false,
      clock: () => now,
      onResolved: (r) => resolved.push(r),
    });
    await tool.git('tag', '-f', 'v1.2', tool.commits[0]!);
    expect(await github.resolveRef(TOOL, 'v1.2')).toBe(tool.commits[0]);
    await tool.git('tag', '-f', 'v1.2', tool.commits[2]!);
    now += 24 * HOUR - 1;
    server.resetStats();
    expect(await github.resolveRef(TOOL, 'v1.2')).toBe(tool.commits[0]);
    expect(server.stats.requests).toBe(0);
    now += 1;
    expect(await github.resolveRef(TOOL, 'v1.2')).toBe(tool.commits[2]);
    expect(server.stats.requests).toBeGreaterThan(0);
    expect(resolved.map((r) => [r.kind, r.commit, r.cached])).toEqual([
      ['tag', tool.commits[0], false],
      ['tag', tool.commits[0], true],
      ['tag', tool.commits[2], false],
    ]);
  });

  it('an annotated tag of the tag shape (`v2`) is reused as its peeled commit', async () => {
    const github = githubConnector({ baseUrl: server.url, cache: false, clock: () => 0 });
    expect(await github.resolveRef(TOOL, 'v2')).toBe(tool.commits[0]);
    server.resetStats();
    expect(await github.resolveRef(TOOL, 'v2')).toBe(tool.commits[0]);
    expect(server.stats.requests).toBe(0);
  });

  // The shape alone does not make a tag: "branches are mutable", and a branch called `v1.2`
  // is a branch. Only the tag shape AND the server's word that it is a tag earn 24 h.
  it('"Refetched on every scan — branches are mutable": a branch named `v1.2` (not a tag) is re-resolved on every scan', async () => {
    const now = 9_000_000;
    const resolved: ResolvedGithubRef[] = [];
    const github = githubConnector({
      baseUrl: server.url,
      cache: false,
      clock: () => now,
      onResolved: (r) => resolved.push(r),
    });
    const tip = hexy.head('v1.2');
    expect(await fileAt(github, HEXY, 'v1.2', 'from.txt')).toEqual({ text: 'branch v1.2\n', commit: tip });
    await hexy.git('branch', '-f', 'v1.2', hexy.commits[0]!);
    server.resetStats();
    expect(await fileAt(github, HEXY, 'v1.2', 'from.txt')).toEqual({ text: 'main\n', commit: hexy.commits[0] });
    expect(server.stats.requests).toBeGreaterThan(0);
    expect(resolved.map((r) => [r.kind, r.cached])).toEqual([
      ['branch', false],
      ['branch', false],
    ]);
    await hexy.git('branch', '-f', 'v1.2', tip);
  });

  // "| 40-char hex | regex `^[0-9a-f]{40}$` | Cached forever — SHAs are immutable |"
  it('"40-char hex … Cached forever": a full commit is never looked up, whatever the clock says', async () => {
    let now = 0;
    const github = githubConnector({ baseUrl: server.url, cache: false, clock: () => now });
    server.resetStats();
    expect(await github.resolveRef(TOOL, tool.commits[1]!)).toBe(tool.commits[1]);
    now += 365 * 24 * HOUR;
    expect(await github.resolveRef(TOOL, tool.commits[1]!)).toBe(tool.commits[1]);
    expect(server.stats.requests).toBe(0);
  });
});

describe('AIP-26 ref table: a name that looks like hex is a ref to resolve first', () => {
  // aip-26.md, github source: "`ref` | string | yes | Branch, tag, or 40-character SHA."
  // ADAPTER.md: "| anything else (branch) | Resolve via GET /repos/{owner}/{repo}/git/refs/heads/{ref} → SHA."
  // Only `^[0-9a-f]{40}$` is taken as a commit without asking the server.
  it.each([
    ['the branch', 'cafe1234', 'branch cafe1234\n', () => hexy.head('cafe1234')],
    ['the tag', 'c0ffee42', 'main\n', () => hexy.commits[0]!],
  ])(
    '"Branch, tag, or 40-character SHA": %s `%s` is resolved through the server\'s refs, in defineCode and in the connector alike',
    async (_what, ref, content, commit) => {
      const resolved: ResolvedGithubRef[] = [];
      const github = githubConnector({ baseUrl: server.url, cache: false, onResolved: (r) => resolved.push(r) });
      expect(await fileAt(github, HEXY, ref, 'from.txt')).toEqual({ text: content, commit: commit() });
      const scanned = await scanCode({ workspaceRoot: await makeWorkspace({}), github, code: at(HEXY, ref) });
      expect(scanned.sources[0]!.commit).toBe(commit());
      expect(await github.resolveRef(HEXY, ref)).toBe(commit());
      expect(resolved.every((r) => r.kind === (ref === 'cafe1234' ? 'branch' : 'tag'))).toBe(true);
    },
  );

  it("refs win over abbreviations: a branch named like the start of another commit's id names the branch", async () => {
    const name = hexy.commits[0]!.slice(0, 10);
    const target = hexy.head('cafe1234');
    await hexy.git('branch', name, target);
    try {
      const github = githubConnector({ baseUrl: server.url, cache: false });
      expect(await fileAt(github, HEXY, name, 'from.txt')).toEqual({ text: 'branch cafe1234\n', commit: target });
    } finally {
      await hexy.git('branch', '-D', name);
    }
  });

  // The spec's own code-workspace example pins `ref: 4f3a2b1c` (aip-26.md, "kind:
  // code-workspace"): when no branch or tag has the name, a hex name is an abbreviated
  // commit, expanded against the repository's history as the skill provider does.
  it('"ref: 4f3a2b1c" (the spec\'s code-workspace example): a hex name no branch or tag has is expanded as an abbreviated commit', async () => {
    const resolved: ResolvedGithubRef[] = [];
    const github = githubConnector({ baseUrl: server.url, cache: false, onResolved: (r) => resolved.push(r) });
    const short = tool.commits[1]!.slice(0, 8);
    expect(await fileAt(github, TOOL, short, 'version.txt')).toEqual({ text: 'two\n', commit: tool.commits[1] });
    expect(resolved).toEqual([{ repo: TOOL, ref: short, commit: tool.commits[1], kind: 'commit', cached: false }]);
  });

  it('a hex name that is neither a ref nor the start of a commit is refused after asking the server, naming the ref', async () => {
    const github = githubConnector({ baseUrl: server.url, cache: false });
    const missing = tool.commits.some((c) => c.startsWith('0badf00d')) ? '0badf00e' : '0badf00d';
    server.resetStats();
    const error = (await scanCode({ workspaceRoot: await makeWorkspace({}), github, code: at(TOOL, missing) }).catch(
      (e: unknown) => e,
    )) as SourceResolutionError;
    expect(error).toBeInstanceOf(SourceResolutionError);
    expect(error.reason).toBe('ref-unresolved');
    expect(error.message).toContain(missing);
    expect(error.message).toContain(`refs/heads/${missing}, refs/tags/${missing}`);
    expect(error.message).toContain('full 40-character commit id');
    expect(error.cause).toBeInstanceOf(GithubRefNotFoundError);
    expect(error.cause).toMatchObject({ code: 'AIP26_REF_NOT_FOUND', repo: TOOL, ref: missing });
    expect((error.cause as Error).cause).toMatchObject({ code: 'GIT_COMMIT_NOT_FOUND' });
    expect(server.stats.requests).toBeGreaterThan(0);
  });

  it('a connector that requires pins still refuses a hex name (it is not a full commit)', async () => {
    const github = githubConnector({ baseUrl: server.url, cache: false, requirePin: true });
    await expect(github.resolveRef(HEXY, 'cafe1234')).rejects.toBeInstanceOf(PinRequiredError);
  });
});

describe('AIP-26 "Hosts MUST cache fetched github tarballs by (repo, ref, path)": the default connector keeps them', () => {
  it('"Hosts MUST cache fetched github tarballs": without a cache option, fetched folders go to the store at defaultCacheRoot() and a new connector reads them back without a request', async () => {
    const cacheHome = await scratchDir('aip26-default-store-');
    const previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cacheHome;
    try {
      const code = { sources: [{ github: { repo: TOOL, ref: tool.commits[2]! } }] };
      server.resetStats();
      const first = await defineCodeWithReport({
        workspaceRoot: await makeWorkspace({}),
        github: githubConnector({ baseUrl: server.url }),
        code,
      });
      expect(server.stats.requests).toBeGreaterThan(0);
      const store = await openContentStore({ root: join(cacheHome, 'agentproto') });
      expect((await store.list()).objects.length).toBeGreaterThan(0);
      // A second connector, as a new process of the same host would make.
      server.resetStats();
      const second = await defineCodeWithReport({
        workspaceRoot: await makeWorkspace({}),
        github: githubConnector({ baseUrl: server.url }),
        code,
      });
      expect(server.stats.requests).toBe(0);
      expect(second.bundle.equals(first.bundle)).toBe(true);
    } finally {
      process.env.XDG_CACHE_HOME = previous;
    }
  });

  // ADAPTER.md "Conformance rules" 3: "Given the same source list and SHA-pinned github
  // refs, `defineCode` MUST produce a byte-identical tarball". A store kept by the writer of
  // the earlier entry order (full paths by their bytes) holds archives under the key that
  // writer used; the connector must never hand one out for the same commit.
  it('"byte-identical tarball": an archive a store kept from the earlier entry order is never handed out for the same commit', async () => {
    const commit = tool.commits[1]!;
    const fresh = await githubConnector({ baseUrl: server.url, cache: false }).fetch(TOOL, commit);
    const upgraded = await openContentStore({ root: join(await scratchDir(), 'store') });
    const declaration = { baseUrl: server.url, repo: TOOL, path: '' };
    const stale = await writeBundle([{ path: 'stale.txt', data: Buffer.from('made by the earlier layout') }]);
    await upgraded.acquire(
      { provider: 'github-archive', declaration, version: commit, contentId: `${server.url}/${TOOL}@${commit}:` },
      async (_destination, ctx) => {
        await ctx.writeFile('archive.tar.gz', stale);
      },
    );
    const served = await githubConnector({ baseUrl: server.url, cache: upgraded }).fetch(TOOL, commit);
    expect(served.equals(fresh)).toBe(true);
  });

  // ADAPTER.md, github: "Cache key: `(repo, resolvedSha, path)`", and "Cache invalidation
  // triggers": "A `github:` source's resolved SHA changes (for floating refs, on every
  // scan)". A branch is resolved again on every scan; its content, under the commit it
  // resolved to, comes from the store until that commit changes.
  it('"Cache key: (repo, resolvedSha, path)": a branch is listed again on the next scan, but its unchanged commit is not fetched again', async () => {
    const github = githubConnector({
      baseUrl: server.url,
      cache: await openContentStore({ root: join(await scratchDir(), 'store') }),
    });
    const code = { sources: [{ github: { repo: TOOL, ref: 'main' } }] };
    // Ref listings (protocol v2 `ls-refs`) and pack requests (every other upload-pack POST:
    // a v2 `fetch`, or a v0 negotiation, which names no command).
    const posts = () => server.stats.log.filter((entry) => entry.method === 'POST');
    const listings = () => posts().filter((entry) => entry.command === 'ls-refs').length;
    const packs = () => posts().filter((entry) => entry.command !== 'ls-refs').length;
    server.resetStats();
    await defineCodeWithReport({ workspaceRoot: await makeWorkspace({}), github, code });
    expect([listings(), packs() > 0]).toEqual([1, true]);
    server.resetStats();
    const again = await defineCodeWithReport({ workspaceRoot: await makeWorkspace({}), github, code });
    expect(again.report.sources[0]!.commit).toBe(tool.head('main'));
    expect([listings(), packs()]).toEqual([1, 0]);
  });

  it("a default store that cannot be opened fails the fetch with the store's error, never a silent fetch without a cache", async () => {
    const notAFolder = join(await scratchDir('aip26-bad-home-'), 'file');
    await writeFile(notAFolder, 'not a folder');
    const previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = notAFolder;
    try {
      const github = githubConnector({ baseUrl: server.url });
      const code = { sources: [{ github: { repo: TOOL, ref: tool.commits[2]! } }] };
      const error = (await defineCodeWithReport({ workspaceRoot: await makeWorkspace({}), github, code }).catch(
        (e: unknown) => e,
      )) as SourceResolutionError;
      expect(error).toBeInstanceOf(SourceResolutionError);
      expect(error.reason).toBe('fetch-failed');
      expect(error.cause).toMatchObject({ code: 'CACHE_ROOT_UNUSABLE' });
      expect(error.message).toContain(join(notAFolder, 'agentproto'));
    } finally {
      process.env.XDG_CACHE_HOME = previous;
    }
  });

  it('`cache: false` opts out: nothing is written to the default store, and every fetch asks the server', async () => {
    const cacheHome = await scratchDir('aip26-no-store-');
    const previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cacheHome;
    try {
      const code = { sources: [{ github: { repo: TOOL, ref: tool.commits[2]! } }] };
      for (let i = 0; i < 2; i += 1) {
        server.resetStats();
        await defineCodeWithReport({
          workspaceRoot: await makeWorkspace({}),
          github: githubConnector({ baseUrl: server.url, cache: false }),
          code,
        });
        expect(server.stats.requests).toBeGreaterThan(0);
      }
      expect(existsSync(join(cacheHome, 'agentproto'))).toBe(false);
    } finally {
      process.env.XDG_CACHE_HOME = previous;
    }
  });
});
