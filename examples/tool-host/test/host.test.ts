import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type MadeRepo, isolatedGitEnv, run } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredTool, RegistrationProblem } from '../src/index.js';
import { type GithubStandIn, startGithubStandIn } from './support/github-stand-in.js';
import { host, json } from './support/host.js';
import { tempDir } from './support/temp.js';

const REPO = 'acme/hello-tool';

/** Two releases of a tool: v1.0.0 is the first commit, main the second. */
const TOOL_V1 = {
  'tool.js': "console.log('hello from v1', require('fs').readFileSync('lib/greeting.txt', 'utf8').trim())\n",
  'lib/greeting.txt': 'v1 greeting\n',
};
const TOOL_V2 = {
  'tool.js':
    "console.log('hello from v2,', process.env.WHO ?? 'nobody', '/', require('fs').readFileSync('old/greeting.txt', 'utf8').trim())\n",
};

let github: GithubStandIn;
let tool: MadeRepo;

beforeAll(async () => {
  github = await startGithubStandIn();
  tool = await github.repo(REPO, {
    commits: [
      { message: 'v1', files: TOOL_V1 },
      { message: 'v2', files: TOOL_V2 },
    ],
    tags: [{ name: 'v1.0.0', target: 0, annotated: true }],
  });
});

afterAll(async () => {
  await github?.close();
});

/** A workspace holding `manifest` as tool.json, and a state folder for the host. */
async function setUp(manifest: unknown): Promise<{ file: string; state: string; workspace: string }> {
  const workspace = await tempDir('tool-host-workspace-');
  const file = join(workspace, 'tool.json');
  await writeFile(file, JSON.stringify(manifest, null, 2));
  return { file, state: await tempDir('tool-host-state-'), workspace };
}

const register = (file: string, state: string) =>
  host(['register', file, '--state', state, '--github-url', github.url, '--json']);
const runTool = (name: string, state: string, ...extra: string[]) =>
  host(['run', name, '--state', state, '--github-url', github.url, ...extra]);

async function registry(state: string): Promise<{ format: number; tools: Record<string, RegisteredTool> }> {
  return JSON.parse(await readFile(join(state, 'registry.json'), 'utf8'));
}

const hello = {
  name: 'hello',
  code: {
    sources: [
      { github: { repo: REPO, ref: 'main' } },
      { github: { repo: REPO, ref: 'v1.0.0', path: 'lib', as: 'old' } },
    ],
  },
  run: 'tool.js',
};

describe('registering a tool', () => {
  it('records the commit each branch and tag ref resolved to', async () => {
    const { file, state } = await setUp(hello);
    const output = await register(file, state);
    expect(output.code).toBe(0);

    const stored = (await registry(state)).tools.hello!;
    expect(stored.sources).toEqual([
      {
        source: 'sources[0]',
        kind: 'github',
        repo: REPO,
        ref: 'main',
        refKind: 'branch',
        commit: tool.commits[1],
        files: 2,
        bytes: expect.any(Number),
      },
      {
        source: 'sources[1]',
        kind: 'github',
        repo: REPO,
        ref: 'v1.0.0',
        refKind: 'tag',
        commit: tool.commits[0],
        files: 1,
        bytes: 12,
      },
    ]);
    // What runs is pinned to those commits.
    expect(stored.code).toEqual({
      sources: [
        { github: { repo: REPO, ref: tool.commits[1] } },
        { github: { repo: REPO, ref: tool.commits[0], path: 'lib', as: 'old' } },
      ],
    });
    expect(json<RegisteredTool>(output).sources).toEqual(stored.sources);
    const listed = json<RegisteredTool[]>(await host(['list', '--state', state, '--json']));
    expect(listed.map((t) => [t.name, t.sources.map((s) => s.commit)])).toEqual([
      ['hello', [tool.commits[1], tool.commits[0]]],
    ]);
  });

  it('refuses a manifest with bad sources, naming each with its code and pointer, and runs nothing', async () => {
    const workspace = await tempDir('tool-host-marker-');
    const marker = join(workspace, 'ran');
    const { file, state } = await setUp({
      name: 'broken',
      code: {
        sources: [
          { github: { repo: REPO, ref: 'v1.0.0' } },
          { local: '../../etc/passwd' },
          { github: { repo: REPO, ref: 'no-such-branch' } },
          { inline: { path: 'ok.txt', content: 'fine' } },
        ],
      },
      run: { shell: `touch ${marker}` },
    });

    const output = await register(file, state);
    expect(output.code).toBe(1);
    const { error } = json<{ error: { code: string; tool: string; problems: RegistrationProblem[] } }>(output);
    expect(error).toMatchObject({ code: 'TOOL_REFUSED', tool: 'broken' });
    expect(error.problems.map(({ code, pointer, source, reason }) => ({ code, pointer, source, reason }))).toEqual([
      { code: 'AIP26_SOURCE_UNRESOLVED', pointer: '/code/sources/1', source: 'sources[1]', reason: 'unsafe-path' },
      { code: 'AIP26_SOURCE_UNRESOLVED', pointer: '/code/sources/2', source: 'sources[2]', reason: 'ref-unresolved' },
    ]);
    expect(error.problems[1]!.message).toMatch(/^sources\[2\] .*no-such-branch/);

    // Nothing was recorded, so there is nothing to run.
    await expect(access(join(state, 'registry.json'))).rejects.toThrow();
    const ran = await runTool('broken', state);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('TOOL_NOT_REGISTERED');
    await expect(access(marker)).rejects.toThrow();
  });

  it('prints each problem of a refused manifest on stderr', async () => {
    const { file, state } = await setUp({
      name: 'Bad Name',
      code: { sources: [{ inline: { path: '/etc/x', content: '' } }] },
      run: 'tool.exe',
    });
    const output = await host(['register', file, '--state', state]);
    expect(output.code).toBe(1);
    expect(output.stderr).toMatch(/^error: TOOL_REFUSED: /);
    expect(output.stderr).toContain('  /name  TOOL_NAME_INVALID');
    expect(output.stderr).toContain('  /run  AIP26_RUN_INVALID (unknown-extension)');
  });

  it('fetches nothing when a manifest pinned to a commit is registered again, nor when it runs', async () => {
    const { file, state } = await setUp({
      name: 'pinned',
      code: { sources: [{ github: { repo: REPO, ref: tool.commits[0] } }] },
      run: 'tool.js',
    });
    github.reset();
    expect((await register(file, state)).code).toBe(0);
    expect(github.requests()).toBeGreaterThan(0);

    github.reset();
    expect((await register(file, state)).code).toBe(0);
    expect(github.requests()).toBe(0);
    expect((await registry(state)).tools.pinned!.sources[0]).toMatchObject({
      refKind: 'commit',
      commit: tool.commits[0],
    });

    const ran = await runTool('pinned', state);
    expect(ran).toMatchObject({ code: 0, stdout: 'hello from v1 v1 greeting\n' });
    expect(github.requests()).toBe(0);
  });
});

describe('running a tool', () => {
  it('materializes the bundle, runs it in a subprocess and prints its output', async () => {
    const { file, state } = await setUp(hello);
    expect((await register(file, state)).code).toBe(0);
    const output = await runTool('hello', state, '--env', 'WHO=the host');
    expect(output).toMatchObject({ code: 0, stdout: 'hello from v2, the host / v1 greeting\n', stderr: '' });
  });

  it('passes only PATH and the --env pairs to the tool', async () => {
    const { file, state } = await setUp({
      name: 'env',
      code: {
        sources: [
          { inline: { path: 'env.js', content: 'console.log(JSON.stringify(Object.keys(process.env).sort()))\n' } },
        ],
      },
      run: 'env.js',
    });
    expect((await register(file, state)).code).toBe(0);
    const output = await host(['run', 'env', '--state', state, '--env', 'ONLY=this'], {
      HOST_SECRET: 'must-not-reach-the-tool',
    });
    expect(JSON.parse(output.stdout)).toEqual(['ONLY', 'PATH']);
  });

  it('runs the commit that was registered, even after the branch moved', async () => {
    const moving = await github.repo('acme/moving', {
      commits: [
        { message: 'one', files: { 'tool.js': "console.log('one')\n" } },
        { message: 'two', files: { 'tool.js': "console.log('two')\n" } },
      ],
    });
    const { file, state } = await setUp({
      name: 'moving',
      code: { sources: [{ github: { repo: 'acme/moving', ref: 'main' } }] },
      run: 'tool.js',
    });
    expect((await register(file, state)).code).toBe(0);
    // A force-push: main goes back to the first commit.
    await run('git', ['--git-dir', moving.path, 'update-ref', 'refs/heads/main', moving.commits[0]!], {
      env: isolatedGitEnv(),
    });

    expect((await runTool('moving', state)).stdout).toBe('two\n');
    expect((await register(file, state)).code).toBe(0);
    expect((await registry(state)).tools.moving!.sources[0]!.commit).toBe(moving.commits[0]);
    expect((await runTool('moving', state)).stdout).toBe('one\n');
  });

  it('refuses to run when a github source inside a code-workspace moved since registration', async () => {
    const shared = await github.repo('acme/shared', {
      commits: [
        { message: 'one', files: { 'shared.txt': 'one\n' } },
        { message: 'two', files: { 'shared.txt': 'two\n' } },
      ],
    });
    const marker = join(await tempDir('tool-host-marker-'), 'ran');
    const { file, state, workspace } = await setUp({
      name: 'nested',
      code: { sources: [{ ref: '.code/shared' }] },
      run: { shell: `cat shared.txt; touch ${marker}` },
    });
    await mkdir(join(workspace, '.code/shared'), { recursive: true });
    await writeFile(
      join(workspace, '.code/shared/manifest.yaml'),
      'kind: code-workspace\nname: shared\ncode:\n  sources:\n    - github: { repo: acme/shared, ref: main }\n',
    );
    expect((await register(file, state)).code).toBe(0);
    const label = 'sources[0] → ref ".code/shared" → sources[0]';
    expect((await registry(state)).tools.nested!.sources).toMatchObject([
      { source: label, refKind: 'branch', commit: shared.commits[1] },
    ]);

    await run('git', ['--git-dir', shared.path, 'update-ref', 'refs/heads/main', shared.commits[0]!], {
      env: isolatedGitEnv(),
    });
    const output = await runTool('nested', state, '--json');
    expect(output.code).toBe(1);
    expect(json(output).error).toMatchObject({
      code: 'TOOL_SOURCE_MOVED',
      source: label,
      registered: shared.commits[1],
      resolved: shared.commits[0],
    });
    await expect(access(marker)).rejects.toThrow();
  });

  it("passes the tool's exit status on", async () => {
    const { file, state } = await setUp({
      name: 'fails',
      code: { sources: [{ inline: { path: 'fail.sh', content: 'echo failing >&2\nexit 3\n' } }] },
      run: 'fail.sh',
    });
    expect((await register(file, state)).code).toBe(0);
    expect(await runTool('fails', state)).toMatchObject({ code: 3, stdout: '', stderr: 'failing\n' });
  });
});
