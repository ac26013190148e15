import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertReturnsOrThrowsCoded,
  type EntryPointUnderTest,
  malformedDocumentBytes,
  malformedVariant,
  wrongValue,
} from '@agentproto/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as plugins from '../../src/index.js';
import { parseSidecar } from '../../src/build/sidecar.js';
import { resolveInside } from '../../src/read/node.js';
import { parseFrontmatter } from '../../src/skills/frontmatter.js';
import { loadPackage } from '../../src/validate/index.js';
import { folderTree, tarGzOf, zipOf } from '../support/archives.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// [...] feeds [...] every public parse/validate entry point generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." Agent Plugins §5.2: a client validates plugin.json and rejects the
// plugin only on a schema violation; everything else is reported. So a reader given a
// package returns findings, and only a caller's own mistake (a configuration that is not
// one) throws, with a stable code.

/** FC_SEED=<n> replays a failing run; the seed is in every test's name and in fast-check's report. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const RUNS = 80;

const CONFIG = {
  name: 'acme.tools',
  version: '1.0.0',
  description: 'Acme review tooling.',
  spec: '1.1.0',
  include: ['scripts/**', 'docs/**'],
  keywords: ['review'],
  author: { name: 'Acme' },
  mcp: [
    { name: 'web', transport: 'http', url: 'https://mcp.example.com' },
    { name: 'local', command: './scripts/run.sh', args: ['serve'] },
  ],
};
const SKILL_FRONTMATTER = {
  name: 'review',
  description: 'Reviews a change.',
  license: 'MIT',
  metadata: { owner: 'acme' },
};

let contentRoot = '';
let packageDir = '';
/** The built package's documents, parsed: the valid starting points of the mutations. */
const built: Record<string, unknown> = {};
const scratch: string[] = [];

async function freshFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'malformed-plugin-'));
  scratch.push(folder);
  return folder;
}

type PackageFile = 'plugin.json' | 'mcp.json' | 'skills/review/SKILL.md' | '.agentproto-generated.json';
const PACKAGE_FILES: PackageFile[] = [
  'plugin.json',
  'mcp.json',
  'skills/review/SKILL.md',
  '.agentproto-generated.json',
];

/** The built package with one file replaced by malformed bytes (SKILL.md: as its front matter). */
const damagedPackage = (): fc.Arbitrary<{ file: PackageFile; bytes: Uint8Array }> =>
  fc
    .constantFrom(...PACKAGE_FILES)
    .chain((file) => malformedDocumentBytes(built[file]).map((bytes) => ({ file, bytes })));

async function writeDamaged({ file, bytes }: { file: PackageFile; bytes: Uint8Array }): Promise<string> {
  const folder = join(await freshFolder(), 'package');
  await cp(packageDir, folder, { recursive: true });
  await writeFile(
    join(folder, file),
    file.endsWith('SKILL.md') ? Buffer.concat([Buffer.from('---\n'), bytes, Buffer.from('\n---\n# Review\n')]) : bytes,
  );
  return folder;
}

/** A configuration file with these bytes, beside the content root's files. */
async function configFile(bytes: Uint8Array, extension: '.json' | '.yaml'): Promise<string> {
  const file = join(await freshFolder(), `agent-plugin${extension}`);
  await writeFile(file, bytes);
  return file;
}

// biome-ignore lint/suspicious/noExplicitAny: each entry point takes an input of its own type
type EntryPoint = EntryPointUnderTest<any>;

/**
 * Every public entry point that takes a document, a package folder or other untrusted
 * structured input, in one place: a new one goes here (the test below fails until it does).
 */
const ENTRY_POINTS: Record<string, EntryPoint> = {
  checkPluginManifest: {
    input: () => malformedVariant(built['plugin.json']),
    call: (value) => plugins.checkPluginManifest(value),
  },
  checkMcpManifestVersion: {
    input: () => malformedVariant(built['mcp.json']),
    call: (value) => plugins.checkMcpManifestVersion('1.1.0', value),
  },
  readServers: { input: () => malformedVariant(built['mcp.json']), call: (value) => plugins.readServers(value) },
  normalizePluginConfig: {
    input: () => malformedVariant(CONFIG),
    call: (value) => plugins.normalizePluginConfig(value),
  },
  loadPluginConfig: {
    input: () => fc.tuple(malformedDocumentBytes(CONFIG), fc.constantFrom('.json' as const, '.yaml' as const)),
    call: async ([bytes, extension]) => plugins.loadPluginConfig(await configFile(bytes, extension)),
  },
  // Not in the name pattern, but they read a configuration: what `plugin build` and `emit` run.
  buildPlugin: {
    input: () => malformedVariant(CONFIG),
    call: (value) => plugins.buildPlugin(plugins.normalizePluginConfig(value), { contentRoot }),
  },
  emitPlugin: {
    input: () => malformedVariant(CONFIG),
    call: async (value) =>
      plugins.emitPlugin(plugins.normalizePluginConfig(value), join(await freshFolder(), 'out'), { contentRoot }),
  },
  verifyPlugin: {
    input: () =>
      fc.oneof(
        malformedVariant(CONFIG).map((config) => ({ config, damaged: undefined })),
        damagedPackage().map((damaged) => ({ config: CONFIG, damaged })),
      ),
    call: async ({ config, damaged }) =>
      plugins.verifyPlugin(damaged ? await writeDamaged(damaged) : packageDir, plugins.normalizePluginConfig(config), {
        contentRoot,
      }),
  },
  parseFrontmatter: {
    input: () => malformedDocumentBytes(SKILL_FRONTMATTER),
    call: (bytes) =>
      parseFrontmatter(Buffer.concat([Buffer.from('---\n'), bytes, Buffer.from('\n---\nbody\n')]), 'SKILL.md'),
  },
  checkSkill: {
    input: () => malformedDocumentBytes(SKILL_FRONTMATTER),
    call: (bytes) =>
      plugins.checkSkill('review', Buffer.concat([Buffer.from('---\n'), bytes, Buffer.from('\n---\nbody\n')])),
  },
  parseSidecar: {
    input: () => malformedDocumentBytes(built['.agentproto-generated.json']),
    call: (bytes) => parseSidecar(bytes),
  },
  validatePlugin: {
    input: damagedPackage,
    call: async (damaged) => plugins.validatePlugin(await writeDamaged(damaged)),
  },
  loadPackage: { input: damagedPackage, call: async (damaged) => loadPackage(await writeDamaged(damaged)) },
  importPlugin: { input: damagedPackage, call: async (damaged) => plugins.importPlugin(await writeDamaged(damaged)) },
  readPackageFiles: {
    input: damagedPackage,
    call: async (damaged) => plugins.readPackageFiles(await writeDamaged(damaged)),
  },
  // Uploads: a real archive of the built package, cut, flipped or spliced, or random bytes.
  readZip: { input: () => damagedArchive(() => archives.zip), call: (bytes) => plugins.readZip(bytes) },
  readTarGz: { input: () => damagedArchive(() => archives.tarGz), call: (bytes) => plugins.readTarGz(bytes) },
  readUploadedFiles: {
    input: damagedPackage,
    call: async (damaged) => {
      const dir = await writeDamaged(damaged);
      const files = [...folderTree(dir)].flatMap(([path, entry]) =>
        entry.type === 'file' ? [{ path: `acme.tools/${path}`, blob: new Blob([entry.bytes]) }] : [],
      );
      return plugins.validatePlugin(await plugins.readUploadedFiles(files));
    },
  },
  resolveInside: {
    input: () => fc.oneof(wrongValue, fc.string({ maxLength: 40 }), malformedVariant('scripts/run.sh')),
    call: (path) => resolveInside(packageDir, path),
  },
};

const archives: { zip: Uint8Array; tarGz: Uint8Array } = { zip: new Uint8Array(0), tarGz: new Uint8Array(0) };

/** Bytes of an archive damaged the ways a hostile upload is: cut short, bytes overwritten, random. */
const damagedArchive = (archive: () => Uint8Array): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    fc.uint8Array({ maxLength: 4096 }),
    fc.nat().map((cut) => archive().subarray(0, cut % (archive().length + 1))),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => {
      const bytes = archive().slice();
      for (const [at, value] of flips) bytes[at % bytes.length] = value;
      return bytes;
    }),
  );

/** Exports that match the pattern but take no document, and why. */
const NOT_DOCUMENT_INPUT: Record<string, string> = {};

const ENTRY_POINT_NAME =
  /^(parse|validate|read|import|define|resolve|verify|check|load|scan|desugar|plan|normalize|inherit|assert)/;

describe(`Agent Plugins entry points: a malformed document ends in findings or a typed error (seed ${SEED})`, () => {
  beforeAll(async () => {
    contentRoot = await freshFolder();
    const files: Record<string, string> = {
      'skills/review/SKILL.md': `---\nname: review\ndescription: Reviews a change.\nlicense: MIT\nmetadata:\n  owner: acme\n---\n# Review\n`,
      'scripts/run.sh': '#!/bin/sh\necho serve\n',
      'docs/guide.md': '# Guide\n',
    };
    for (const [file, text] of Object.entries(files)) {
      await mkdir(join(contentRoot, file, '..'), { recursive: true });
      await writeFile(join(contentRoot, file), text);
    }
    await chmod(join(contentRoot, 'scripts/run.sh'), 0o755);
    packageDir = join(await freshFolder(), 'acme.tools');
    await plugins.emitPlugin(plugins.normalizePluginConfig(CONFIG), packageDir, { contentRoot });
    archives.zip = zipOf(folderTree(packageDir));
    archives.tarGz = tarGzOf(packageDir);
    for (const file of ['plugin.json', 'mcp.json', '.agentproto-generated.json'])
      built[file] = JSON.parse(await readFile(join(packageDir, file), 'utf8'));
    built['skills/review/SKILL.md'] = SKILL_FRONTMATTER;
  });
  afterAll(async () => {
    await Promise.all(scratch.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('the table names every exported parse/validate/read/import/resolve/verify entry point', () => {
    const exported = Object.entries(plugins)
      .filter(([name, value]) => typeof value === 'function' && ENTRY_POINT_NAME.test(name))
      .map(([name]) => name);
    expect(exported.filter((name) => !(name in ENTRY_POINTS) && !(name in NOT_DOCUMENT_INPUT))).toEqual([]);
  });

  it('the fixtures are valid: the built package validates with no error finding', async () => {
    const validation = await plugins.validatePlugin(packageDir);
    expect(validation.findings.filter((finding) => finding.severity === 'error')).toEqual([]);
    expect(Object.keys((built['mcp.json'] as { mcpServers: object }).mcpServers)).toEqual(['local', 'web']);
  });

  for (const [name, entry] of Object.entries(ENTRY_POINTS)) {
    it(`${name}: returns, or throws an error with a stable code`, async () => {
      await assertReturnsOrThrowsCoded(name, entry, { seed: SEED, numRuns: RUNS });
    }, 120_000);
  }
});

// Counterexamples the property found, kept as fixed cases.
describe('fixed cases the property found', () => {
  it.each(['__proto__', 'constructor', 'toString'])(
    'a configuration key %s is refused by its name, not as "[object Object]" or a function\'s source',
    (key) => {
      const raw = JSON.parse(`{"name":"acme.tools","${key}":{"description":"from a prototype key"}}`) as Record<
        string,
        unknown
      >;
      expect(() => plugins.normalizePluginConfig(raw)).toThrow(
        expect.objectContaining({
          code: 'PLUGIN_CONFIG_INVALID',
          message: `plugin config: ${key} is not a plugin setting`,
        }),
      );
    },
  );

  it.each([null, undefined, [], 'acme.tools', 42])(
    'normalizePluginConfig(%j) is PLUGIN_CONFIG_INVALID, not "Cannot convert undefined or null to object" (seed 606)',
    (raw) => {
      expect(() => plugins.normalizePluginConfig(raw as unknown as Record<string, unknown>)).toThrow(
        expect.objectContaining({
          code: 'PLUGIN_CONFIG_INVALID',
          message: 'plugin config: must hold a table (an object)',
        }),
      );
    },
  );

  it('resolveInside with a path that is not a string is invalid-path, not a TypeError', async () => {
    await expect(resolveInside(packageDir || tmpdir(), null as never)).resolves.toMatchObject({
      ok: false,
      reason: 'invalid-path',
    });
  });

  it("an include glob longer than a path may be is PLUGIN_CONFIG_INVALID at load, not minimatch's TypeError at build", () => {
    expect(() => plugins.normalizePluginConfig({ ...CONFIG, include: ['x'.repeat(70_000)] })).toThrow(
      expect.objectContaining({ code: 'PLUGIN_CONFIG_INVALID' }),
    );
  });
});
