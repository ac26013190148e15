import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { emitPlugin, normalizePluginConfig } from '@agentproto/agent-plugins';
import { malformedDocumentBytes } from '@agentproto/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../support/run.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// Add a property test that feeds every CLI command [...] generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." `agentproto --help`: "Exit status: 0 done, 1 problems found, 2 wrong
// command line or a --strict failure"; src/failure.ts prints "unexpected error" for an error
// without a stable code, and bin.ts "internal error" when main itself fails.
//
// Each command reads a document its own tests accept (a tool manifest, a skills declaration,
// a plugin configuration, a package's plugin.json, mcp.json and SKILL.md, a store's records),
// changed one to three times. The cases of a command run in one real process
// (support/cli-driver.ts) since loading the CLI from source costs seconds; one case per
// command group also runs through the real bin, whose exit status the process sets.

/** FC_SEED=<n> replays a failing run; the seed is in the test's name and in every failure. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
/** Cases per command: each is a whole CLI run, so fewer than the library properties. */
const RUNS = 20;

const execFileAsync = promisify(execFile);
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const DRIVER = fileURLToPath(new URL('./support/cli-driver.ts', import.meta.url));
const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));
const NODE_ARGS = ['--conditions=@agentproto/source', '--import', TSX];

let root = '';

const TOOL = {
  kind: 'tool',
  name: 'hello',
  code: { sources: [{ inline: { path: 'tool.js', content: 'console.log(1)' } }, { local: 'lib/' }] },
  run: 'tool.js',
  runner: { limits: { timeout_ms: 10_000 } },
};
const PLUGIN_CONFIG = {
  name: 'acme.tools',
  version: '1.0.0',
  description: 'Acme review tooling.',
  spec: '1.1.0',
  include: ['scripts/**'],
  mcp: [
    { name: 'web', transport: 'http', url: 'https://mcp.example.com' },
    { name: 'local', command: './scripts/run.sh', args: ['serve'] },
  ],
};
const SKILL_FRONTMATTER = { name: 'review', description: 'Reviews a change.', license: 'MIT' };
const CONTENT: Record<string, string> = {
  'skills/review/SKILL.md': '---\nname: review\ndescription: Reviews a change.\nlicense: MIT\n---\n# Review\n',
  'scripts/run.sh': '#!/bin/sh\necho serve\n',
};

/** One command's case: the files it is given (relative to its own folder) and its command line ({} is that folder). */
interface Case {
  files: Record<string, Uint8Array | string>;
  /** Folders copied in first: [from, to]. */
  copies?: [string, string][];
  argv: string[];
  /** What the malformed document was, for the failure message. */
  shows: string;
}

const show = (file: string, bytes: Uint8Array) =>
  `${file}: ${JSON.stringify(Buffer.from(bytes).toString('utf8').slice(0, 240))} (${bytes.length} bytes)`;

/** The documents each command reads, as generators of cases. */
function commands(): Record<string, fc.Arbitrary<Case>> {
  const declaration = () => ({
    skills: [
      { provider: 'local', source: join(root, 'skills'), version: 'v1', name: 'review', path: 'review' },
      'http://127.0.0.1:9/skills.git#v1',
    ],
  });
  const tool = (argv: string[]) =>
    malformedDocumentBytes(TOOL).map<Case>((bytes) => ({
      files: { 'tool.yaml': bytes, 'lib/a.txt': 'a\n' },
      argv: ['code', ...argv],
      shows: show('tool.yaml', bytes),
    }));
  const skills = (sub: string) =>
    malformedDocumentBytes(declaration()).map<Case>((bytes) => ({
      files: { 'skills.json': bytes },
      argv: ['skills', sub, '{}/skills.json', '--store', '{}/cache', '--local-root', join(root, 'skills')],
      shows: show('skills.json', bytes),
    }));
  const config = (argv: (dir: string) => string[]) =>
    malformedDocumentBytes(PLUGIN_CONFIG).map<Case>((bytes) => ({
      files: { ...CONTENT, 'plugin.json': bytes },
      argv: ['plugin', ...argv('{}')],
      shows: show('plugin.json', bytes),
    }));
  const packageFiles = ['plugin.json', 'mcp.json', 'skills/review/SKILL.md'] as const;
  const damagedPackage = (argv: string[]) =>
    fc.constantFrom(...packageFiles).chain((file) =>
      malformedDocumentBytes(file === 'skills/review/SKILL.md' ? SKILL_FRONTMATTER : packageDocuments[file]).map<Case>(
        (bytes) => ({
          copies: [[join(root, 'package'), 'pkg']],
          files: {
            [`pkg/${file}`]: file.endsWith('SKILL.md')
              ? Buffer.concat([Buffer.from('---\n'), bytes, Buffer.from('\n---\n# Review\n')])
              : bytes,
            ...(argv.includes('verify') ? { ...CONTENT, 'plugin.json': JSON.stringify(PLUGIN_CONFIG) } : {}),
          },
          argv: ['plugin', ...argv],
          shows: show(file, bytes),
        }),
      ),
    );
  const store = (argv: string[]) =>
    fc.constantFrom(...storeRecords).chain(({ path, value }) =>
      malformedDocumentBytes(value).map<Case>((bytes) => ({
        copies: [[join(root, 'store'), 'store']],
        files: { [`store/${path}`]: bytes },
        argv: ['cache', ...argv, '--store', '{}/store'],
        shows: show(path, bytes),
      })),
    );
  return {
    'code check': tool(['check', '{}/tool.yaml', '--store', '{}/cache']),
    'code bundle': tool(['bundle', '{}/tool.yaml', '--out', '{}/out.tar.gz', '--store', '{}/cache']),
    'skills resolve': skills('resolve'),
    'skills prepare': skills('prepare'),
    'skills lock': skills('lock'),
    'plugin build': config((dir) => ['build', `${dir}/plugin.json`, '--out', `${dir}/out`]),
    'plugin emit': config((dir) => ['emit', `${dir}/plugin.json`, '--out', `${dir}/out`]),
    'plugin verify (configuration)': config((dir) => ['verify', `${dir}/plugin.json`, join(root, 'package')]),
    'plugin verify (package)': damagedPackage(['verify', '{}/plugin.json', '{}/pkg']),
    'plugin validate': damagedPackage(['validate', '{}/pkg']),
    'plugin validate --strict': damagedPackage(['validate', '{}/pkg', '--strict']),
    'plugin import': damagedPackage(['import', '{}/pkg', '--out', '{}/out']),
    'cache ls': store(['ls']),
    'cache verify': store(['verify']),
    'cache gc': store(['gc']),
  };
}

/** Subcommands that read no document of the user's, and why. */
const NO_DOCUMENT_COMMANDS: Record<string, string> = {
  'code run': 'code check and code bundle read the same manifest the same way first; run then starts the program',
  'plugin explain': 'takes a rule or finding code, not a document',
  'plugin init': 'writes a new project into an empty folder; reads no document',
  'plugin push': 'needs a registry; it validates the folder as plugin validate does before any upload',
  'plugin pull': "reads a registry's artifact: the OCI tests serve hostile ones from a real registry",
  'cache put': 'takes a folder to store, not a document',
  'cache push': 'needs a registry; it reads the store as cache ls does',
  'cache pull': "reads a registry's artifacts: the remote tests serve hostile ones from a real registry",
};

let packageDocuments: Record<'plugin.json' | 'mcp.json', unknown> = { 'plugin.json': {}, 'mcp.json': {} };
let storeRecords: { path: string; value: unknown }[] = [];

/** Writes a case's folder; returns it. */
async function materialize(folder: string, one: Case): Promise<string> {
  await mkdir(folder, { recursive: true });
  for (const [from, to] of one.copies ?? []) await cp(from, join(folder, to), { recursive: true });
  for (const [path, content] of Object.entries(one.files)) {
    await mkdir(join(folder, path, '..'), { recursive: true });
    await writeFile(join(folder, path), content);
  }
  if (one.files['scripts/run.sh'] !== undefined) await chmod(join(folder, 'scripts/run.sh'), 0o755);
  return folder;
}

interface Result {
  index: number;
  status: number | string;
  stderr: string;
}

/** Runs the cases in one driver process; each result, in order. */
async function drive(folder: string, cases: { argv: string[]; cwd: string }[]): Promise<Result[]> {
  await mkdir(folder, { recursive: true });
  const list = join(folder, 'cases.json');
  await writeFile(list, JSON.stringify(cases));
  const { stdout } = await execFileAsync(process.execPath, [...NODE_ARGS, DRIVER, list, '30000'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 280_000,
  });
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Result);
}

/** What is wrong with one run, or undefined: a status outside 0/1/2, or an uncoded failure. */
function problemOf(status: number | string, stderr: string): string | undefined {
  if (typeof status !== 'number' || ![0, 1, 2].includes(status)) return `exit status ${status}`;
  if (/unexpected error|internal error/.test(stderr)) return `stderr: ${stderr.split('\n').slice(0, 3).join(' | ')}`;
  return undefined;
}

describe(`agentproto: a malformed document is a finding or a coded error, never "unexpected error" (seed ${SEED})`, () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'malformed-cli-'));
    await mkdir(join(root, 'skills', 'review'), { recursive: true });
    await writeFile(join(root, 'skills', 'review', 'SKILL.md'), CONTENT['skills/review/SKILL.md']!);
    // A built package, and a store holding one folder: the valid documents the cases change.
    const content = await materialize(join(root, 'content'), { files: CONTENT, argv: [], shows: '' });
    await emitPlugin(normalizePluginConfig(PLUGIN_CONFIG), join(root, 'package'), { contentRoot: content });
    packageDocuments = {
      'plugin.json': JSON.parse(await readFile(join(root, 'package', 'plugin.json'), 'utf8')),
      'mcp.json': JSON.parse(await readFile(join(root, 'package', 'mcp.json'), 'utf8')),
    };
    expect(
      (await run(['cache', 'put', join(root, 'skills'), '--name', 'skills', '--store', join(root, 'store')])).code,
    ).toBe(0);
    const records = [...(await readdir(join(root, 'store', 'keys'))).map((name) => `keys/${name}`)];
    for (const object of await readdir(join(root, 'store', 'objects'))) records.push(`objects/${object}/COMPLETE.json`);
    storeRecords = await Promise.all(
      records.map(async (path) => ({ path, value: JSON.parse(await readFile(join(root, 'store', path), 'utf8')) })),
    );
    expect(storeRecords.length).toBeGreaterThanOrEqual(2);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('the list covers every subcommand `agentproto <group> --help` names, or says why not', async () => {
    const covered = new Set(Object.keys(commands()).map((command) => command.split(' ').slice(0, 2).join(' ')));
    const missing: string[] = [];
    for (const group of ['code', 'skills', 'plugin', 'cache']) {
      const help = (await run([group, '--help'])).stdout;
      const section = help.split('\nSubcommands:\n')[1]?.split('\n\n')[0] ?? '';
      const names = [...section.matchAll(/^ {2}([a-z]+)/gm)].map((match) => `${group} ${match[1]}`);
      expect(names.length, `${group} --help lists its subcommands`).toBeGreaterThan(1);
      missing.push(...names.filter((name) => !covered.has(name) && !(name in NO_DOCUMENT_COMMANDS)));
    }
    expect(missing).toEqual([]);
  });

  it('every command ends 0, 1 or 2 with a finding or a coded error', async () => {
    const all = Object.entries(commands()).flatMap(([command, arbitrary], c) =>
      fc
        .sample(arbitrary, { numRuns: RUNS, seed: SEED + c })
        .map((one, i) => ({ command, one, folder: join(root, `case-${c}-${i}`) })),
    );
    const prepared = await Promise.all(
      all.map(async ({ one, folder }) => ({
        argv: one.argv.map((arg) => arg.replaceAll('{}', folder)),
        cwd: await materialize(folder, one),
      })),
    );
    // Two processes, one per core, each taking every other case.
    const halves = [0, 1].map((half) =>
      prepared.map((one, index) => ({ one, index })).filter(({ index }) => index % 2 === half),
    );
    const results = await Promise.all(
      halves.map((half, h) =>
        drive(
          join(root, `driver-${h}`),
          half.map(({ one }) => one),
        ).then((lines) => lines.map((line) => ({ ...line, index: half[line.index]!.index }))),
      ),
    );
    const byIndex = new Map(results.flat().map((result) => [result.index, result]));
    const problems: string[] = [];
    for (const [index, { command, one }] of all.entries()) {
      const result = byIndex.get(index);
      const problem =
        result === undefined ? 'no result: the driver process ended early' : problemOf(result.status, result.stderr);
      if (problem !== undefined)
        problems.push(`agentproto ${command} (seed ${SEED}, case ${index}): ${problem}\n  ${one.shows}`);
    }
    expect(problems, `FC_SEED=${SEED} replays these`).toEqual([]);
  }, 300_000);

  it('through the real bin too: one case per command group, its exit status as the process sets it', async () => {
    const groups = commands();
    const chosen = ['code check', 'skills resolve', 'plugin validate', 'cache verify'].map((command, c) => ({
      command,
      one: fc.sample(groups[command]!, { numRuns: 1, seed: SEED + 100 + c })[0]!,
    }));
    const problems: string[] = [];
    for (const [index, { command, one }] of chosen.entries()) {
      const folder = await materialize(join(root, `bin-${index}`), one);
      const argv = one.argv.map((arg) => arg.replaceAll('{}', folder));
      const outcome = await execFileAsync(process.execPath, [...NODE_ARGS, BIN, ...argv], {
        encoding: 'utf8',
        cwd: folder,
        timeout: 60_000,
      }).then(
        ({ stderr }) => ({ status: 0 as number | string, stderr }),
        (error: { code?: number | string; signal?: string; stderr?: string }) => ({
          status: error.code ?? error.signal ?? 'no status',
          stderr: error.stderr ?? '',
        }),
      );
      const problem = problemOf(outcome.status, outcome.stderr);
      if (problem !== undefined) problems.push(`agentproto ${command} (seed ${SEED}): ${problem}\n  ${one.shows}`);
    }
    expect(problems, `FC_SEED=${SEED} replays these`).toEqual([]);
  }, 300_000);
});

// Counterexamples the library properties found, as the CLI meets them.
describe('fixed cases, through the CLI', () => {
  it('plugin build: an include glob of 70,000 characters is PLUGIN_CONFIG_INVALID, not "unexpected error: pattern is too long"', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'long-include-'));
    try {
      await materialize(folder, {
        files: { ...CONTENT, 'plugin.json': JSON.stringify({ ...PLUGIN_CONFIG, include: ['x'.repeat(70_000)] }) },
        argv: [],
        shows: '',
      });
      const outcome = await run(['plugin', 'build', join(folder, 'plugin.json'), '--out', join(folder, 'out')]);
      expect(outcome.stderr).not.toContain('unexpected error');
      expect(outcome).toMatchObject({ code: 1, stderr: expect.stringContaining('PLUGIN_CONFIG_INVALID') });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('cache ls: a key record without its key, or a completion marker without its content id, is left out of the listing, never "unexpected error: Cannot read properties of undefined"', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'damaged-store-'));
    try {
      const store = join(folder, 'store');
      await materialize(join(folder, 'skills'), {
        files: { 'review/SKILL.md': CONTENT['skills/review/SKILL.md']! },
        argv: [],
        shows: '',
      });
      expect((await run(['cache', 'put', join(folder, 'skills'), '--name', 'skills', '--store', store])).code).toBe(0);
      const [keyName] = await readdir(join(store, 'keys'));
      const [objectId] = await readdir(join(store, 'objects'));
      const listed = await run(['cache', 'ls', '--store', store]);
      expect(listed).toMatchObject({ code: 0, stdout: expect.stringContaining('1 object, 1 key, 1 link') });

      // The key record keeps its object id and loses its key (what seed 843927188 made).
      const keyFile = join(store, 'keys', keyName!);
      await writeFile(keyFile, JSON.stringify({ objectId: JSON.parse(await readFile(keyFile, 'utf8')).objectId }));
      const withoutKey = await run(['cache', 'ls', '--store', store]);
      expect(withoutKey.stderr).not.toContain('unexpected error');
      expect(withoutKey).toMatchObject({ code: 0, stdout: expect.stringContaining('1 object, 0 keys, 1 link') });

      // The marker loses its content id: the object is corrupt to verify, and not listed.
      const markerFile = join(store, 'objects', objectId!, 'COMPLETE.json');
      const { contentId: _dropped, ...marker } = JSON.parse(await readFile(markerFile, 'utf8'));
      await writeFile(markerFile, JSON.stringify(marker));
      const withoutContentId = await run(['cache', 'ls', '--store', store]);
      expect(withoutContentId.stderr).not.toContain('unexpected error');
      expect(withoutContentId).toMatchObject({ code: 0, stdout: expect.stringContaining('0 objects, 0 keys, 1 link') });
      const verified = await run(['cache', 'verify', '--store', store]);
      expect(verified.stderr).not.toContain('unexpected error');
      expect(verified.code).toBe(1);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('code bundle: a local glob of 70,000 characters is AIP26_SOURCE_UNRESOLVED, not "unexpected error: pattern is too long"', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'long-glob-'));
    try {
      const tool = {
        ...TOOL,
        code: { sources: [{ local: { path: 'lib/', glob: 'x'.repeat(70_000) } }] },
        run: undefined,
      };
      await materialize(folder, {
        files: { 'tool.json': JSON.stringify(tool), 'lib/a.txt': 'a\n' },
        argv: [],
        shows: '',
      });
      const outcome = await run([
        'code',
        'bundle',
        join(folder, 'tool.json'),
        '--out',
        join(folder, 'out.tar.gz'),
        '--store',
        join(folder, 'cache'),
      ]);
      expect(outcome.stderr).not.toContain('unexpected error');
      expect(outcome).toMatchObject({ code: 1, stderr: expect.stringContaining('AIP26_SOURCE_UNRESOLVED') });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
