import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { VALIDATORS_FILE, validatorsSource } from '../scripts/validators.js';
import { CONFIG_VALIDATORS, PLUGIN_VALIDATORS, validateServer } from '../src/generated/validators.js';
import { PLUGIN_CONFIG_SCHEMA, PLUGIN_CONFIG_SCHEMA_ID } from '../src/config/schema-file.js';
import { DEFAULT_SPEC_VERSION, PINNED_SCHEMAS, SPEC_VERSIONS, mcpSchemaId } from '../src/schemas.js';

// The manifest and server validators are compiled at build (Ajv standalone) from the pinned
// schemas; the file in the tree must be exactly what the schemas give today.
describe('validators compiled at build', () => {
  it(`${VALIDATORS_FILE} is what scripts/validators.ts generates from the pinned schemas`, async () => {
    const inTree = readFileSync(new URL(`../${VALIDATORS_FILE}`, import.meta.url), 'utf8');
    expect(inTree === (await validatorsSource()), `${VALIDATORS_FILE} is stale: run the package build`).toBe(true);
  });

  const manifests: unknown[] = [
    { $schema: 'x', name: 'ok' },
    { name: 'no-schema' },
    { $schema: 'x', name: 'Bad_Name', version: 7, extra: true },
    { $schema: 'x', name: 'a'.repeat(65), author: { name: '' }, keywords: ['a', 'a'] },
    { $schema: 'x', name: '😀'.repeat(64) },
    { $schema: 'x', name: 'p', presentation: { icon: 3 }, extensions: [] },
    'not an object',
  ];

  it.each(SPEC_VERSIONS)('the %s plugin validator reports what Ajv compiling the pinned schema reports', (spec) => {
    const compiled = new Ajv2020({ allErrors: true, strict: true, strictTypes: false }).compile(
      PINNED_SCHEMAS[spec].plugin,
    );
    for (const sample of manifests) {
      const manifest =
        typeof sample === 'object' ? { ...sample, $schema: PINNED_SCHEMAS[spec].plugin.$id?.toString() } : sample;
      const generated = PLUGIN_VALIDATORS[spec];
      expect(generated(manifest)).toBe(compiled(manifest));
      expect(generated.errors ?? null).toStrictEqual(compiled.errors ?? null);
    }
  });

  it('the server validator accepts and refuses what Ajv compiling #/$defs/server does', () => {
    const ajv = new Ajv2020({ allErrors: false, strict: true, strictTypes: false });
    ajv.addSchema(PINNED_SCHEMAS[DEFAULT_SPEC_VERSION].mcp);
    const compiled = ajv.getSchema(`${mcpSchemaId(DEFAULT_SPEC_VERSION)}#/$defs/server`)!;
    for (const entry of [
      { type: 'stdio', command: 'node' },
      { type: 'http', url: 'https://example.com/mcp', headers: { A: 'b' } },
      { type: 'sse' },
      { type: 'stdio', command: 'node', args: [1] },
      { command: 'node', extra: true },
      [],
    ]) {
      expect(validateServer(entry)).toBe(compiled(entry));
      expect(validateServer.errors ?? null).toStrictEqual(compiled.errors ?? null);
    }
  });
  it('the configuration validators report what Ajv compiling the published schema reports, verbose errors included', () => {
    const ajv = new Ajv2020({ allErrors: false, strict: true, strictRequired: false, verbose: true });
    ajv.addSchema(PLUGIN_CONFIG_SCHEMA as object);
    const document = ajv.getSchema(PLUGIN_CONFIG_SCHEMA_ID)!;
    const plugin = ajv.getSchema(`${PLUGIN_CONFIG_SCHEMA_ID}#/$defs/plugin`)!;
    const settings: unknown[] = [
      { name: 'acme.tools', version: '1.0.0' },
      { name: 'acme.tools', verison: '1.0.0' },
      { name: 7 },
      { name: 'a', include: 'bin/**' },
      { name: 'a', mcp: [{ name: 's', transport: 'stdio', command: 'node', args: [1] }] },
      { name: 'a', mcp: [{ name: 's', transport: 'carrier-pigeon' }] },
      { name: 'a', spec: '2.0.0', keywords: [1] },
      [],
    ];
    for (const sample of settings) {
      for (const [generated, compiled, value] of [
        [CONFIG_VALIDATORS.plugin, plugin, sample],
        [CONFIG_VALIDATORS.document, document, { plugin: sample }],
        [CONFIG_VALIDATORS.document, document, sample],
      ] as const) {
        expect(generated(value)).toBe(compiled(value));
        expect(generated.errors ?? null).toStrictEqual(compiled.errors ?? null);
      }
    }
  });
});
