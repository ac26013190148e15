import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Finding,
  type McpServerConfig,
  buildPlugin,
  checkPluginManifest,
  checkSkill,
  importPlugin,
  readServers,
  sortFindings,
  writePlugin,
} from '../src/index.js';
import { selectIncluded } from '../src/bundle/include.js';
import { byteOrder } from '../src/text.js';

/** The file part of a finding path (before `#`): a package path, never one that climbs. */
const filePart = (finding: Finding) => finding.path.split('#')[0] ?? '';
const climbs = (path: string) => path.split('/').includes('..');

const anyJson = fc.jsonValue({ maxDepth: 3 });
const manifestLike = fc.record(
  {
    $schema: fc.constantFrom(
      'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json',
      'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json',
      'x',
    ),
    name: fc.oneof(fc.string(), fc.constantFrom('acme.tools', 'a..b', '-x')),
    version: anyJson,
    author: anyJson,
    extensions: anyJson,
    keywords: anyJson,
    '../x': anyJson,
  },
  { requiredKeys: [] },
);

describe('properties of every check', () => {
  it('findings are always sorted, and no finding path climbs out of the package (plugin.json)', () => {
    fc.assert(
      fc.property(fc.oneof(manifestLike, anyJson), (value) => {
        const { findings } = checkPluginManifest(value);
        expect(findings).toEqual(sortFindings(findings));
        for (const f of findings) expect(climbs(filePart(f)), f.path).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('findings are always sorted, and no finding path climbs out of the package (mcp.json)', () => {
    const server = fc.record(
      {
        type: fc.constantFrom('stdio', 'streamable-http', 'sse', 'x'),
        command: fc.string(),
        args: fc.array(fc.string()),
        url: fc.string(),
        cwd: fc.string(),
        env: fc.dictionary(fc.string(), fc.string()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(server, anyJson)), (servers) => {
        const { findings } = readServers({
          $schema: 'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json',
          mcpServers: servers,
        });
        expect(findings).toEqual(sortFindings(findings));
        for (const f of findings) expect(climbs(filePart(f)), f.path).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('findings are always sorted for any SKILL.md and any include glob', () => {
    // Skill names come from a directory listing: one path segment, never `.` or `..`.
    const folderName = fc.string({ minLength: 1 }).filter((s) => !s.includes('/') && s !== '.' && s !== '..');
    fc.assert(
      fc.property(
        folderName,
        fc.uint8Array({ maxLength: 300 }),
        fc.array(fc.string(), { maxLength: 5 }),
        (name, bytes, globs) => {
          const skill = checkSkill(name, bytes);
          expect(skill.findings).toEqual(sortFindings(skill.findings));
          const included = selectIncluded(['a/b.txt', 'c.md'], globs);
          expect(included.findings).toEqual(sortFindings(included.findings));
          for (const f of [...skill.findings, ...included.findings]) expect(climbs(filePart(f)), f.path).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// Valid pieces of a plugin, so the round trip has something to carry.
const skillName = fc.stringMatching(/^[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,4})?$/);
const text = fc
  .string({ minLength: 1, maxLength: 80 })
  .map((s) => s.replace(/[\u0000-\u001f\u007f]/g, ' ').trim() || 'x');
const plugin = fc.record({
  skills: fc.uniqueArray(
    fc.record({
      name: skillName,
      description: text,
      extra: fc.option(text, { nil: undefined }),
      executable: fc.boolean(),
    }),
    {
      selector: (s) => s.name,
      maxLength: 4,
    },
  ),
  files: fc.uniqueArray(
    fc.record({
      path: fc.stringMatching(/^(bin|docs)\/[a-z0-9]{1,6}(\.[a-z]{1,3})?$/),
      body: text,
      executable: fc.boolean(),
    }),
    {
      selector: (f) => f.path,
      maxLength: 4,
    },
  ),
  servers: fc.uniqueArray(
    fc.oneof(
      fc.record({ name: skillName, command: fc.constant('npx'), args: fc.array(text, { maxLength: 3 }) }),
      fc.record({
        name: skillName,
        transport: fc.constant('http' as const),
        url: skillName.map((n) => `https://mcp.example.com/${n}`),
      }),
    ),
    { selector: (s) => s.name, maxLength: 3 },
  ),
  spec: fc.constantFrom('1.0.0' as const, '1.1.0' as const),
  description: fc.option(text, { nil: undefined }),
  provenanceHeaders: fc.boolean(),
});

describe('byte order', () => {
  it('is the order of the UTF-8 bytes, for any strings (lone surrogates, characters above U+FFFF)', () => {
    const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
    const unit = fc.oneof(
      fc.constantFrom('a', 'z', '\u00e9', '\ue000', '\ufffd', '\uffff', '\ud800', '\udbff', '\udc00', '\ud83d\ude00'),
      fc.string({ unit: 'binary', maxLength: 2 }),
    );
    const text = fc.array(unit, { maxLength: 4 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(byteOrder(a, b)).toBe(bytes(a, b));
        expect(byteOrder(a, a)).toBe(0);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('round trip', () => {
  it('build(import(build(x))) == build(x), byte for byte and mode for mode', async () => {
    await fc.assert(
      fc.asyncProperty(plugin, async (x) => {
        const scratch = await mkdtemp(join(tmpdir(), 'agent-plugins-prop-'));
        try {
          const source = join(scratch, 'source');
          const put = async (path: string, body: string, executable: boolean) => {
            await mkdir(dirname(join(source, path)), { recursive: true });
            await writeFile(join(source, path), body, { mode: executable ? 0o755 : 0o644 });
          };
          await mkdir(source);
          for (const skill of x.skills) {
            await put(
              `skills/${skill.name}/SKILL.md`,
              `---\nname: ${skill.name}\ndescription: ${JSON.stringify(skill.description)}\n---\n# ${skill.name}\n`,
              false,
            );
            if (skill.extra !== undefined) await put(`skills/${skill.name}/notes.md`, skill.extra, skill.executable);
          }
          for (const file of x.files) await put(file.path, file.body, file.executable);
          const config = {
            name: 'acme.tools',
            version: '1.0.0',
            ...(x.description === undefined ? {} : { description: x.description }),
            include: x.files.length ? ['bin/**', 'docs/**'] : [],
            mcp: x.servers as McpServerConfig[],
            provenanceHeaders: x.provenanceHeaders,
          };
          const first = await buildPlugin(config, { contentRoot: source, spec: x.spec });
          expect(first.rejected).toBe(false);
          await writePlugin(first.files, join(scratch, 'package'));
          const imported = await importPlugin(join(scratch, 'package'));
          await writePlugin(imported.content, join(scratch, 'content'));
          const second = await buildPlugin(imported.config!, { contentRoot: join(scratch, 'content'), spec: x.spec });
          const view = (files: typeof first.files) =>
            [...files].map(([path, file]) => [path, file.mode, Buffer.from(file.bytes).toString('base64')]);
          expect(view(second.files)).toEqual(view(first.files));
        } finally {
          await rm(scratch, { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
