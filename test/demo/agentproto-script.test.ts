// `npx -y pnpm@12.4.2 agentproto …` at the root of a clone (scripts/agentproto.mjs): the cli's
// dist/ when it and the workspace packages it depends on are newer than their src/, src/ through
// tsx otherwise, so the command works straight after install, with no build.
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staleBuilds, workspacePackageNames } from '../../scripts/workspace-builds.mjs';
import { runChild, withoutPackageManagerEnv } from './support/child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function pnpmAgentproto(args: string[], env: NodeJS.ProcessEnv, pnpmArgs: string[] = [], cwd = root) {
  return runChild('npx', ['-y', 'pnpm@12.4.2', ...pnpmArgs, 'agentproto', ...args], { cwd, env, timeout: 110_000 });
}

describe('npx -y pnpm@12.4.2 agentproto at the root', () => {
  it('prints the cli version, from dist/ or src/, whichever is current', async () => {
    const { version } = JSON.parse(await readFile(join(root, 'packages/cli/package.json'), 'utf8')) as {
      version: string;
    };
    const { code, stdout, stderr } = await pnpmAgentproto(['--version'], withoutPackageManagerEnv());
    expect({ code, stdout }, stderr).toEqual({ code: 0, stdout: `${version}\n` });
  });

  it('runs from src/ when told to, as on a fresh clone with no dist/: --help and its exit code', async () => {
    const help = await pnpmAgentproto(['--help'], withoutPackageManagerEnv({ AGENTPROTO_FROM_SOURCE: '1' }));
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agentproto /);
    // A usage error keeps its exit code through the script.
    const wrong = await pnpmAgentproto(['no-such-command'], withoutPackageManagerEnv({ AGENTPROTO_FROM_SOURCE: '1' }));
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('no-such-command');
  });
});

describe('npx -y pnpm@12.4.2 -C <clone> agentproto elsewhere', () => {
  let elsewhere = '';
  beforeAll(async () => {
    elsewhere = await mkdtemp(join(tmpdir(), 'agentproto-elsewhere-'));
  });
  afterAll(async () => {
    if (elsewhere !== '') await rm(elsewhere, { recursive: true, force: true });
  });

  it('takes relative paths from the folder it was run in, not the root pnpm runs the script at', async () => {
    await writeFile(
      join(elsewhere, 'tool.yaml'),
      'kind: tool\nname: hello\ncode:\n  sources:\n    - inline: { path: main.mjs, content: "console.log(1)" }\nrun: main.mjs\n',
    );
    const { code, stdout, stderr } = await pnpmAgentproto(
      ['code', 'check', 'tool.yaml', '--json'],
      withoutPackageManagerEnv(),
      ['-C', root],
      elsewhere,
    );
    expect(code, stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(stdout))).toContain('main.mjs');
  });
});

describe('staleBuilds: which dist/ folders are older than their src/', () => {
  let workspace = '';
  const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
  const exports = { '.': { '@agentproto/source': './src/index.ts', import: './dist/index.js' } };
  const app = { name: '@t/app', exports, bin: { app: './dist/bin.js' }, dependencies: { '@t/lib': 'workspace:*' } };

  /** Writes a file of the temporary workspace's packages/ dated `seconds`, and its folders too. */
  async function write(path: string, text: string, seconds: number): Promise<void> {
    const full = join(workspace, 'packages', path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
    for (let entry = full; entry !== workspace; entry = dirname(entry)) await utimes(entry, at(seconds), at(seconds));
  }

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'agentproto-stale-builds-'));
    // Sources at 0 s, builds at 10 s; unrelated has no dist/.
    await write('app/package.json', JSON.stringify(app), 0);
    await write('app/src/index.ts', '', 0);
    await write('app/src/bin.ts', '', 0);
    await write('lib/package.json', JSON.stringify({ name: '@t/lib', exports }), 0);
    await write('lib/src/deep/part.ts', '', 0);
    await write('unrelated/package.json', JSON.stringify({ name: '@t/unrelated', exports }), 0);
    await write('unrelated/src/index.ts', '', 0);
    await write('app/dist/index.js', '', 10);
    await write('app/dist/bin.js', '', 10);
    await write('lib/dist/index.js', '', 10);
  });
  afterAll(async () => {
    if (workspace !== '') await rm(workspace, { recursive: true, force: true });
  });

  it('is empty when every package on the chain was built after its sources; one off the chain is not named', async () => {
    expect(await staleBuilds(workspace, ['@t/app'])).toEqual([]);
    expect(await staleBuilds(workspace, ['@t/unrelated'])).toEqual(['@t/unrelated']);
  });

  it('over every package under packages/ (what `pnpm bench` checks), names only the unbuilt one', async () => {
    const names = await workspacePackageNames(workspace);
    expect(names).toEqual(['@t/app', '@t/lib', '@t/unrelated']);
    expect(await staleBuilds(workspace, names)).toEqual(['@t/unrelated']);
  });

  it('names a dependency whose source changed after its build, however deep the file', async () => {
    await write('lib/src/deep/part.ts', 'export {};\n', 20);
    expect(await staleBuilds(workspace, ['@t/app'])).toEqual(['@t/lib']);
    await write('lib/dist/index.js', '', 30);
    expect(await staleBuilds(workspace, ['@t/app'])).toEqual([]);
  });

  it('names a package when a file its manifest loads from dist/ is missing, or its manifest changed', async () => {
    await rm(join(workspace, 'packages/app/dist/bin.js'));
    expect(await staleBuilds(workspace, ['@t/app'])).toEqual(['@t/app']);
    await write('app/dist/bin.js', '', 10);
    expect(await staleBuilds(workspace, ['@t/app'])).toEqual([]);
    await write('app/package.json', JSON.stringify({ ...app, description: 'changed' }), 20);
    expect(await staleBuilds(workspace, ['@t/app'])).toEqual(['@t/app']);
  });
});
