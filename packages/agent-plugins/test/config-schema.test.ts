import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseUntrustedToml } from '@agentproto/documents';
import Ajv2020 from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadPluginConfig,
  normalizePluginConfig,
  PLUGIN_CONFIG_SCHEMA,
  PLUGIN_CONFIG_SCHEMA_ID,
  PluginConfigError,
} from '../src/index.js';

const REPO = join(import.meta.dirname, '../../..');
const SCHEMA_FILE = join(REPO, 'schemas/plugin-config/1/plugin-config.schema.json');

// An Ajv of the test's own, compiled from the file on disk: what an editor or a console does.
let schemaAccepts: (value: unknown) => boolean;
let dir: string;
beforeAll(async () => {
  const ajv = new Ajv2020({ strict: false });
  const validate = ajv.compile(JSON.parse(await readFile(SCHEMA_FILE, 'utf8')));
  schemaAccepts = (value) => validate(value) === true;
  dir = await mkdtemp(join(tmpdir(), 'agent-plugins-config-schema-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe('the plugin configuration schema', () => {
  it('is the file under schemas/, at the path its $id names, and the only copy', async () => {
    expect(PLUGIN_CONFIG_SCHEMA).toEqual(JSON.parse(await readFile(SCHEMA_FILE, 'utf8')));
    expect(PLUGIN_CONFIG_SCHEMA.$id).toBe(PLUGIN_CONFIG_SCHEMA_ID);
    expect(relative(join(REPO, 'schemas'), SCHEMA_FILE)).toBe(
      PLUGIN_CONFIG_SCHEMA_ID.replace('https://agentproto.sh/schemas/', ''),
    );
    const holders: string[] = [];
    for (const folder of ['schemas', 'packages/agent-plugins/src', 'packages/cli/src']) {
      for (const file of await filesUnder(join(REPO, folder))) {
        if (!file.endsWith('.json')) continue;
        if ((await readFile(file, 'utf8')).includes(`"$id": "${PLUGIN_CONFIG_SCHEMA_ID}"`))
          holders.push(relative(REPO, file));
      }
    }
    expect(holders).toEqual(['schemas/plugin-config/1/plugin-config.schema.json']);
  });

  it('describes every key, so an editor shows what each one is for', () => {
    const undocumented: string[] = [];
    const walk = (schema: unknown, at: string): void => {
      if (typeof schema !== 'object' || schema === null) return;
      const node = schema as Record<string, unknown>;
      if (typeof node.properties === 'object' && node.properties !== null) {
        for (const [key, child] of Object.entries(node.properties as Record<string, Record<string, unknown>>)) {
          if (typeof child.description !== 'string' || child.description === '') undocumented.push(`${at}.${key}`);
        }
      }
      // `if` only tells the two forms of a document apart; it declares no key.
      for (const [key, child] of Object.entries(node)) if (key !== 'if') walk(child, `${at}/${key}`);
    };
    walk(PLUGIN_CONFIG_SCHEMA, '#');
    expect(undocumented).toEqual([]);
  });

  it('accepts the golden configuration, and the loader does too', async () => {
    const file = join(import.meta.dirname, 'golden/source/plugin.toml');
    expect(schemaAccepts(parseUntrustedToml(await readFile(file), { source: file }))).toBe(true);
    await expect(loadPluginConfig(file)).resolves.toMatchObject({ config: { name: 'acme.tools' } });
  });

  it('accepts every plugin.toml the READMEs write (heredocs), and the loader does too', async () => {
    const found: string[] = [];
    for (const readme of ['README.md', 'packages/cli/README.md', 'packages/agent-plugins/README.md']) {
      const text = await readFile(join(REPO, readme), 'utf8').catch(() => '');
      for (const match of text.matchAll(/<<'TOML'\n([\s\S]*?)^TOML$/gm)) {
        const file = join(dir, `readme-${found.length}.toml`);
        await writeFile(file, match[1]!);
        expect(schemaAccepts(parseUntrustedToml(match[1]!, { source: file }))).toBe(true);
        await expect(loadPluginConfig(file)).resolves.toMatchObject({ config: { name: expect.any(String) } });
        found.push(readme);
      }
    }
    expect(found).toContain('packages/cli/README.md');
  });
});

// Settings the schema and the code both accept: globs and folders that stay inside the content
// root, never Pi's "merge" beside OpenCode (the two rules a schema cannot say).
const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/);
const path = fc.array(word, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
const stringMap = fc.dictionary(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,7}$/), fc.string({ maxLength: 12 }), {
  maxKeys: 3,
});
const server = fc.record(
  {
    name: word,
    transport: fc.constantFrom('stdio', 'http', 'sse'),
    command: path,
    args: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
    env: stringMap,
    cwd: path,
    url: fc.constant('https://mcp.example.com/mcp'),
    headers: stringMap,
    enabled: fc.boolean(),
  },
  { requiredKeys: ['name'] },
);
const settings = fc.record(
  {
    name: fc.constantFrom('acme.tools', 'kit', 'a-b.c'),
    version: fc.constantFrom('1.0.0', '0.1.0-rc.1'),
    description: fc.string({ maxLength: 20 }),
    homepage: fc.constant('https://example.com'),
    repository: fc.constant('https://github.com/acme/tools'),
    license: fc.constantFrom('MIT', 'Apache-2.0'),
    keywords: fc.array(word, { maxLength: 3 }),
    author: fc.record(
      { name: word, email: fc.constant('a@example.com'), url: fc.constant('https://a.example') },
      {
        requiredKeys: [],
      },
    ),
    spec: fc.constantFrom('1.0.0', '1.1.0'),
    presentation: fc.record({ displayName: word }),
    contentRoot: path,
    include: fc.array(
      path.map((folder) => `${folder}/**`),
      { maxLength: 3 },
    ),
    skills: path,
    sharedResources: fc.array(path, { maxLength: 2 }),
    provenanceHeaders: fc.boolean(),
    mcp: fc.array(server, { maxLength: 3 }),
    extensions: fc.constant({ 'com.example': { x: 1 } }),
    runtimes: fc.subarray(['agent-plugins', 'opencode', 'claude']),
    packageManager: fc.constant('pnpm@10.0.0'),
    opencodeDependency: fc.constant('^1.0.0'),
    pi: fc.record({ skillsDir: path, packageJson: fc.constantFrom('own', 'merge') }, { requiredKeys: [] }),
  },
  { requiredKeys: ['name'] },
);

const SNAKE: Record<string, string> = {
  contentRoot: 'content_root',
  sharedResources: 'shared_resources',
  provenanceHeaders: 'provenance_headers',
  packageManager: 'package_manager',
  opencodeDependency: 'opencode_dependency',
};
const snakeCase = (value: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(value).map(([key, item]) => [SNAKE[key] ?? key, item]));

/** One way to break a valid configuration, and the key the loader must then name. */
const breakage = fc.oneof(
  fc.record({
    key: fc.constantFrom('version', 'description', 'license', 'contentRoot', 'skills', 'packageManager'),
    value: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(word, { maxLength: 1 })),
  }),
  fc.record({
    key: fc.constantFrom('keywords', 'include', 'sharedResources', 'runtimes'),
    value: fc.oneof(word, fc.integer(), fc.constant([1]), fc.constant({})),
  }),
  fc.record({ key: fc.constant('provenanceHeaders'), value: fc.oneof(word, fc.integer(), fc.constant(null)) }),
  fc.record({
    key: fc.constantFrom('author', 'pi', 'presentation', 'extensions'),
    value: fc.oneof(word, fc.constant([])),
  }),
  fc.record({ key: fc.constant('spec'), value: fc.constantFrom('2.0.0', '1.0', '') }),
  fc.record({ key: fc.constant('mcp'), value: fc.oneof(word, fc.constant([1]), fc.constant([{ command: 'npx' }])) }),
  fc.record({
    key: fc.constant('mcp[0].transport'),
    value: fc.constantFrom('websocket', 'HTTP', 'streamable-http'),
  }),
  fc.record({ key: fc.constant('mcp[0].env.KEY'), value: fc.oneof(fc.integer(), fc.boolean()) }),
  fc.record({ key: fc.constant('pi.packageJson'), value: fc.constantFrom('keep', 'OWN') }),
  fc.record({ key: fc.constantFrom('colour', 'displayName', 'mcpServers', 'plugin'), value: word }),
  fc.record({ key: fc.constant('name'), value: fc.constantFrom(undefined, '', 42) }),
);

function broken(valid: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(valid);
  if (key === 'mcp[0].transport' || key === 'mcp[0].env.KEY') {
    const first: Record<string, unknown> = { name: 'one' };
    if (key === 'mcp[0].transport') first.transport = value;
    else first.env = { KEY: value };
    copy.mcp = [first];
  } else if (key === 'pi.packageJson') copy.pi = { packageJson: value };
  else if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
}

const keyOf = (error: unknown) =>
  error instanceof PluginConfigError ? error.key : `not a PluginConfigError: ${error}`;

describe('the schema and the loader agree', () => {
  it('a generated valid configuration passes both, in either spelling, as a whole document or a plugin table', () => {
    fc.assert(
      fc.property(settings, fc.boolean(), fc.boolean(), (valid, snake, table) => {
        const plugin = snake ? snakeCase(valid) : valid;
        const document = table ? { plugin, tool: { other: 'tools keep their own tables' } } : plugin;
        expect(schemaAccepts(document)).toBe(true);
        if (valid.runtimes?.includes('opencode') && valid.pi?.packageJson === 'merge') return;
        expect(normalizePluginConfig(structuredClone(plugin))).toEqual(valid);
      }),
      { numRuns: 300 },
    );
  });

  it('a generated broken configuration fails both, and the loader names the key that broke', () => {
    fc.assert(
      fc.property(settings, breakage, fc.boolean(), (valid, { key, value }, table) => {
        const bad = broken(valid, key, value);
        expect(schemaAccepts(table ? { plugin: bad } : bad)).toBe(false);
        let caught: unknown;
        try {
          normalizePluginConfig(bad);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(PluginConfigError);
        // An item of the wrong type is named by its list (`mcp`, not `mcp[0]`).
        expect(keyOf(caught).replace(/\[0\]\.name$/, '')).toBe(key === 'mcp' ? 'mcp' : key);
      }),
      { numRuns: 300 },
    );
  });

  it('loadPluginConfig refuses the same broken files, naming the file and the key', async () => {
    await fc.assert(
      fc.asyncProperty(settings, breakage, fc.boolean(), async (valid, { key, value }, table) => {
        const bad = broken(valid, key, value);
        const file = join(dir, 'plugin.json');
        await writeFile(file, JSON.stringify(table ? { plugin: bad } : bad));
        const error = await loadPluginConfig(file).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ code: 'PLUGIN_CONFIG_INVALID', file });
        expect((error as Error).message.startsWith(`${file}: `)).toBe(true);
        expect(keyOf(error).replace(/\[0\]\.name$/, '')).toBe(key);
      }),
      { numRuns: 40 },
    );
  });

  it('a top-level mcp_servers is checked as the servers it is', async () => {
    const file = join(dir, 'servers.json');
    await writeFile(file, JSON.stringify({ plugin: { name: 'a.b' }, mcp_servers: [{ name: 'x', url: 7 }] }));
    await expect(loadPluginConfig(file)).rejects.toMatchObject({
      key: 'mcp[0].url',
      message: `${file}: mcp[0].url must be a string`,
    });
  });

  it('a JSON configuration may name its schema for editors; the loader ignores it', async () => {
    const file = join(dir, 'with-schema.json');
    await writeFile(file, JSON.stringify({ $schema: PLUGIN_CONFIG_SCHEMA_ID, name: 'a.b' }));
    expect(schemaAccepts(JSON.parse(await readFile(file, 'utf8')))).toBe(true);
    expect((await loadPluginConfig(file)).config).toEqual({ name: 'a.b' });
  });
});
