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
import { SourceResolutionError, defineCodeWithReport, scanCode } from '../src/index.js';
import { PinRequiredError, type ResolvedGithubRef, githubConnector } from '../src/github/connector.js';
import { extractWithGnuTar, makeWorkspace } from './support/workspace.js';

// A local stand-in for GitHub: real repositories served over git smart HTTP by
// `git http-backend` on 127.0.0.1 (the connector speaks git, not GitHub's REST API).
const TOKEN = 'ghp_CANARY0123456789secretTOKEN';
let root: TempDir;
let open: GitHttpServer;
let privateServer: GitHttpServer;
let shell: MadeRepo;

beforeAll(async () => {
  root = await tempDir();
  shell = await makeRepo({
    root: root.path,
    name: 'mycompany/mastra-tool-shell.git',
    commits: [
      {
        message: 'v1',
        files: {
          'package.json': '{"v":1}\n',
          'lib/base.ts': 'export const base = 1\n',
          'bin/run.sh': { content: '#!/bin/sh\n', mode: 0o755 },
          'src/x.ts': 'x1',
        },
      },
      { message: 'v2', files: { 'package.json': '{"v":2}\n', 'src/x.ts': 'x2' } },
    ],
    tags: [
      { name: 'v1.0.0', target: 0, annotated: true, message: 'release 1' },
      { name: 'same', target: 0 },
    ],
    branches: [{ name: 'same', from: 1 }],
  });
  open = await startGitHttpServer({ root: root.path });
  privateServer = await startGitHttpServer({ root: root.path, auth: { username: 'x-access-token', password: TOKEN } });
});

afterAll(async () => {
  await open?.close();
  await privateServer?.close();
  await root?.cleanup();
});

const repo = 'mycompany/mastra-tool-shell';

describe('githubConnector', () => {
  it('bundles a github source at a tag, recording the resolved commit', async () => {
    const resolved: ResolvedGithubRef[] = [];
    const github = githubConnector({ baseUrl: open.url, onResolved: (r) => resolved.push(r) });
    const workspaceRoot = await makeWorkspace({});
    const { bundle, report } = await defineCodeWithReport({
      workspaceRoot,
      github,
      code: { sources: [{ github: { repo, ref: 'v1.0.0' } }, { inline: { path: 'tool.ts', content: 't' } }] },
    });
    const files = await extractWithGnuTar(bundle);
    expect(files.get('package.json')?.text).toBe('{"v":1}\n');
    expect(files.get('bin/run.sh')?.mode).toBe(0o755);
    expect(report.sources[0]!.commit).toBe(shell.commits[0]);
    expect(resolved).toEqual([{ repo, ref: 'v1.0.0', commit: shell.commits[0], kind: 'tag', cached: false }]);
  });

  it('reuses a tag resolution for 24 hours, then asks the server again', async () => {
    let now = 1_000_000;
    const resolved: ResolvedGithubRef[] = [];
    const github = githubConnector({ baseUrl: open.url, clock: () => now, onResolved: (r) => resolved.push(r) });
    open.resetStats();
    await github.resolveRef(repo, 'v1.0.0');
    const afterFirst = open.stats.requests;
    now += 23 * 3600_000;
    await github.resolveRef(repo, 'v1.0.0');
    expect(open.stats.requests).toBe(afterFirst);
    now += 2 * 3600_000;
    await github.resolveRef(repo, 'v1.0.0');
    expect(open.stats.requests).toBeGreaterThan(afterFirst);
    expect(resolved.map((r) => r.cached)).toEqual([false, true, false]);
  });

  it('resolves a branch on every scan', async () => {
    const github = githubConnector({ baseUrl: open.url });
    open.resetStats();
    expect(await github.resolveRef(repo, 'main')).toBe(shell.commits[1]);
    const once = open.stats.requests;
    await github.resolveRef(repo, 'main');
    expect(open.stats.requests).toBe(2 * once);
  });

  it('refuses a name that is both a branch and a tag, naming the full names', async () => {
    const github = githubConnector({ baseUrl: open.url });
    const error = (await scanCode({
      workspaceRoot: await makeWorkspace({}),
      github,
      code: { sources: [{ github: { repo, ref: 'same' } }] },
    }).catch((e: unknown) => e)) as SourceResolutionError;
    expect(error).toBeInstanceOf(SourceResolutionError);
    expect(error.reason).toBe('ref-unresolved');
    expect(error.message).toContain('refs/heads/same');
    expect(error.message).toContain('refs/tags/same');
  });

  it('refuses floating refs when pins are required', async () => {
    const github = githubConnector({ baseUrl: open.url, requirePin: true });
    await expect(github.resolveRef(repo, 'main')).rejects.toBeInstanceOf(PinRequiredError);
    expect(await github.resolveRef(repo, shell.commits[0]!)).toBe(shell.commits[0]);
  });

  it('serves a second SHA-pinned bundle from the content store without a request', async () => {
    const cache = await openContentStore({ root: join(root.path, 'cache') });
    const github = githubConnector({ baseUrl: open.url, cache });
    const code = { sources: [{ github: { repo, ref: shell.commits[1]!, path: 'src' } }] };
    const workspaceRoot = await makeWorkspace({});
    open.resetStats();
    const first = await defineCodeWithReport({ workspaceRoot, github, code });
    expect(open.stats.requests).toBeGreaterThan(0);
    open.resetStats();
    const second = await defineCodeWithReport({ workspaceRoot, github, code });
    expect(open.stats.requests).toBe(0);
    expect(second.bundle.equals(first.bundle)).toBe(true);
    expect([...(await extractWithGnuTar(second.bundle)).keys()]).toEqual(['src/x.ts']);
  });

  it('reads a private repository with a token sent only as a header', async () => {
    const github = githubConnector({ baseUrl: privateServer.url, token: TOKEN });
    expect(await github.resolveRef(repo, 'v1.0.0')).toBe(shell.commits[0]);
  });

  it('never lets the token reach an error, the report or defineCode', async () => {
    const wrong = `${TOKEN}-WRONG`;
    const github = githubConnector({ baseUrl: privateServer.url, getToken: () => wrong });
    const workspaceRoot = await makeWorkspace({});
    const error = (await defineCodeWithReport({
      workspaceRoot,
      github,
      code: { sources: [{ github: { repo, ref: 'main' } }] },
    }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(SourceResolutionError);
    const seen = [
      String(error),
      error.stack ?? '',
      JSON.stringify(error),
      String((error as { cause?: unknown }).cause),
      (error.cause as Error | undefined)?.stack ?? '',
    ].join('\n');
    expect(seen).not.toContain(TOKEN);
    expect(seen).not.toContain(Buffer.from(`x-access-token:${wrong}`).toString('base64'));
    const ok = githubConnector({ baseUrl: privateServer.url, token: TOKEN });
    const { report } = await defineCodeWithReport({
      workspaceRoot,
      github: ok,
      code: { sources: [{ github: { repo, ref: shell.commits[0]! } }] },
    });
    expect(JSON.stringify(report)).not.toContain(TOKEN);
  });
});

describe('bundle cache', () => {
  it('returns the stored tar.gz for the same merged files, and a new one when a file changes', async () => {
    const cache = await openContentStore({ root: join(root.path, 'bundles') });
    const workspaceRoot = await makeWorkspace({ 'a.ts': 'one' });
    const code = { sources: [{ local: 'a.ts' }] };
    const first = await defineCodeWithReport({ workspaceRoot, code, cache });
    const listed = (await cache.list()).objects.length;
    const again = await defineCodeWithReport({ workspaceRoot, code, cache });
    expect(again.bundle.equals(first.bundle)).toBe(true);
    expect((await cache.list()).objects.length).toBe(listed);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(workspaceRoot, 'a.ts'), 'two');
    const changed = await defineCodeWithReport({ workspaceRoot, code, cache });
    expect(changed.report.sha256).not.toBe(first.report.sha256);
    expect((await extractWithGnuTar(changed.bundle)).get('a.ts')?.text).toBe('two');
  });
});
