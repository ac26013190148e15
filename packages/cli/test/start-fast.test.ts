import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { scratchFolders } from './support/scratch.js';

const execFileAsync = promisify(execFile);
const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const scratch = scratchFolders();

/**
 * A module hook that records every module node resolves, in a file: ESM has no list of
 * loaded modules to read afterwards, and the hooks run on their own thread.
 */
const HOOK = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.AGENTPROTO_LOAD_LOG, result.url + '\\n');
  return result;
}
`;

/**
 * The modules the real bin resolves for one command line, from the workspace's TypeScript
 * sources, with a line `v8 flags: …` where it changes V8's flags, and at the end a line
 * `required: <file>` for each CommonJS module the process required (createRequire included).
 */
async function modulesLoaded(args: string[]): Promise<string[]> {
  const dir = await scratch();
  const hook = join(dir, 'hook.mjs');
  const register = join(dir, 'register.mjs');
  const log = join(dir, 'loaded.txt');
  await writeFile(hook, HOOK);
  await writeFile(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`,
  );
  const flags = join(dir, 'preload.cjs');
  await writeFile(flags, PRELOAD);
  await writeFile(log, '');
  await execFileAsync(
    process.execPath,
    [
      '--conditions=@agentproto/source',
      '--require',
      flags,
      '--import',
      TSX,
      '--import',
      pathToFileURL(register).href,
      BIN,
      ...args,
    ],
    { env: { ...process.env, AGENTPROTO_LOAD_LOG: log }, encoding: 'utf8' },
  ).catch((error: { code?: unknown }) => {
    // A wrong command line exits 2, a rejected plugin 1; what it loaded is what counts here.
    if (error.code !== 1 && error.code !== 2) throw error;
  });
  return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
}

/** A workspace of one file, and a manifest bundling it. */
async function oneFileWorkspace(): Promise<{ workspace: string; manifest: string }> {
  const workspace = await scratch();
  const manifest = join(workspace, 'manifest.yaml');
  await writeFile(join(workspace, 'main.py'), 'print(1)\n');
  await writeFile(manifest, 'code:\n  sources:\n    - local: main.py\n');
  return { workspace, manifest };
}

/** The other workspace packages among them (@agentproto/* resolves to packages/<name>/src). */
function agentprotoPackages(urls: readonly string[]): string[] {
  const names = urls.map((url) => /\/packages\/([^/]+)\//.exec(url)?.[1]).filter((name) => name !== undefined);
  return [...new Set(names)].filter((name) => name !== 'cli').sort();
}

/**
 * Records, in the load log, each change of V8's flags at run time, where it comes among the
 * modules resolved (a CommonJS preload: it patches node:v8 before the bin loads it), and at
 * exit the CommonJS modules required: a library loaded with createRequire on first use never
 * passes through the ESM hook.
 */
const PRELOAD = `const { appendFileSync } = require('node:fs');
const v8 = require('node:v8');
const set = v8.setFlagsFromString;
v8.setFlagsFromString = (flags) => {
  appendFileSync(process.env.AGENTPROTO_LOAD_LOG, 'v8 flags: ' + flags + '\\n');
  set(flags);
};
process.on('exit', () => {
  const required = Object.keys(require.cache).map((file) => 'required: ' + file + '\\n');
  appendFileSync(process.env.AGENTPROTO_LOAD_LOG, required.join(''));
});
`;

/** Which of agent-plugins' on-demand libraries (src/libraries.ts) were loaded, by ESM or CommonJS. */
function onDemandLibraries(lines: readonly string[]): string[] {
  const names = lines.map((line) => /\/node_modules\/(fflate|minimatch|fastest-levenshtein)\//.exec(line)?.[1]);
  return [...new Set(names.filter((name) => name !== undefined))].sort();
}

describe('start fast: --version and help load no command group', () => {
  it.each([
    [['--version']],
    [['--help']],
    [['plugin', 'build', '--help']],
    [['code', 'bundle', '--help']],
    [['plugins']],
  ])('%j loads none of the @agentproto packages and no command group', async (args) => {
    const loaded = await modulesLoaded(args);
    expect(loaded.some((url) => url.endsWith('/src/main.ts'))).toBe(true);
    expect(agentprotoPackages(loaded)).toEqual([]);
    expect(loaded.filter((url) => /\/src\/commands\//.test(url))).toEqual([]);
    // node:v8 is for code bundle's flags alone.
    expect(loaded).not.toContain('node:v8');
  });

  it('plugin validate loads the plugin group and agent-plugins, and no store, git or code package', async () => {
    // An empty folder: the plugin is rejected (exit 1) after everything it needs is loaded.
    const loaded = await modulesLoaded(['plugin', 'validate', await scratch()]);
    expect(agentprotoPackages(loaded)).toContain('agent-plugins');
    expect(loaded.some((url) => url.endsWith('/src/commands/plugin.ts'))).toBe(true);
    for (const name of ['content-cache', 'skill-providers', 'aip-26', 'git'])
      expect(agentprotoPackages(loaded)).not.toContain(name);
  });

  it('plugin validate of a folder loads none of the libraries only uploads, globs and configurations need', async () => {
    const source = await scratch();
    await mkdir(join(source, 'skills', 'review'), { recursive: true });
    await writeFile(
      join(source, 'skills', 'review', 'SKILL.md'),
      '---\nname: review\ndescription: Reviews.\n---\nRead.\n',
    );
    const validated = await modulesLoaded(['plugin', 'validate', source]);
    expect(validated.some((line) => line.endsWith('/packages/agent-plugins/src/index.ts'))).toBe(true);
    expect(onDemandLibraries(validated)).toEqual([]);
    // The check above can fail: building it with an include glob matches files against it.
    await writeFile(
      join(source, 'plugin.toml'),
      '[plugin]\nname = "acme.review"\nversion = "1.0.0"\ninclude = ["notes/**"]\n',
    );
    await mkdir(join(source, 'notes'));
    await writeFile(join(source, 'notes', 'a.md'), 'A note.\n');
    const out = join(await scratch(), 'acme.review');
    const built = await modulesLoaded(['plugin', 'build', join(source, 'plugin.toml'), '--out', out]);
    expect(onDemandLibraries(built)).toEqual(['minimatch']);
  });

  it('code bundle of workspace files loads no store, git or registry client; a github source loads them', async () => {
    const { workspace, manifest } = await oneFileWorkspace();
    const local = await modulesLoaded(['code', 'bundle', manifest, '--out', join(workspace, 'local.tar.gz')]);
    expect(agentprotoPackages(local)).toContain('aip-26');
    for (const name of ['content-cache', 'git', 'oci']) expect(agentprotoPackages(local)).not.toContain(name);

    // The same command line with a github source (its host refuses the connection: exit 1).
    await writeFile(manifest, 'code:\n  sources:\n    - github: { repo: acme/tools, ref: main }\n');
    const github = await modulesLoaded([
      'code',
      'bundle',
      manifest,
      '--out',
      join(workspace, 'github.tar.gz'),
      '--github-url',
      'http://127.0.0.1:9',
      '--store',
      join(workspace, 'store'),
    ]);
    expect(agentprotoPackages(github)).toEqual(expect.arrayContaining(['content-cache', 'git']));
  });

  it('code bundle sets its V8 flags only once its code is loaded, and no other command does', async () => {
    // A flag changed at run time changes the hash V8 checks code caches against: a built-in
    // module loaded after it is compiled from its source, not from Node's code cache.
    const { workspace, manifest } = await oneFileWorkspace();
    const loaded = await modulesLoaded(['code', 'bundle', manifest, '--out', join(workspace, 'out.tar.gz')]);
    const flagged = loaded.indexOf('v8 flags: --max-opt=1 --semi-space-growth-factor=1');
    expect(flagged).toBeGreaterThan(-1);
    expect(loaded.filter((line) => line.startsWith('v8 flags:'))).toHaveLength(1);
    const aip26 = loaded.findIndex((url) => url.endsWith('/packages/aip-26/src/index.ts'));
    const group = loaded.findIndex((url) => url.endsWith('/src/commands/code.ts'));
    expect(aip26).toBeGreaterThan(-1);
    expect(group).toBeGreaterThan(-1);
    expect(flagged).toBeGreaterThan(Math.max(aip26, group));

    for (const args of [
      ['code', 'bundle', '--help'],
      ['code', 'check', manifest],
    ])
      expect((await modulesLoaded(args)).filter((line) => line.startsWith('v8 flags:'))).toEqual([]);
  });

  it('a command loads its group and the packages it needs (the check above can fail)', async () => {
    const store = join(await scratch(), 'store');
    const loaded = await modulesLoaded(['cache', 'ls', '--store', store]);
    expect(agentprotoPackages(loaded)).toContain('content-cache');
    expect(loaded.some((url) => url.endsWith('/src/commands/cache.ts'))).toBe(true);
    expect(loaded.some((url) => url.endsWith('/src/commands/plugin.ts'))).toBe(false);
  });
});
