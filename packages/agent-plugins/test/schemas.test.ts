import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { PINNED_SCHEMAS, SPEC_VERSIONS } from '../src/index.js';
import { mcpSchemaId, pluginSchemaId, specOfMcpSchemaId, specOfPluginSchemaId } from '../src/schemas.js';

// The official schemas, pinned by the SHA-256 of their published bytes: a changed file is a
// new schema, and a published identifier must never name different contents (§10.1).
const PINS = [
  { spec: '1.0.0', file: 'plugin', sha256: '0a4aad95ce337878ad38802ebf0daa3fde76abe3f65400c86bcbb1ec0b3ab883' },
  { spec: '1.0.0', file: 'mcp', sha256: '6539175bfcdf43085855183e86da40ea94b166547a72b47ae9a0a390516d3acb' },
  { spec: '1.1.0', file: 'plugin', sha256: '27b554bbc63fd7a5a52a5e9ef8a598570156268e970c8b7eeebeee5dd4d93707' },
  { spec: '1.1.0', file: 'mcp', sha256: 'f227ec2c0e40cd23051bd7a6ba1f64789eff7773d4e481d80002ab9fd3c45137' },
] as const;

const read = (spec: string, file: string) =>
  readFileSync(new URL(`../../../schemas/agent-plugins/${spec}/${file}.schema.json`, import.meta.url));

describe('pinned schemas', () => {
  it.each(PINS)('schemas/agent-plugins/$spec/$file.schema.json has the pinned SHA-256', ({ spec, file, sha256 }) => {
    expect(createHash('sha256').update(read(spec, file)).digest('hex')).toBe(sha256);
  });

  it.each(PINS)('the package loads $spec/$file.schema.json exactly as the pinned file parses', ({ spec, file }) => {
    expect(PINNED_SCHEMAS[spec][file]).toStrictEqual(JSON.parse(read(spec, file).toString('utf8')));
  });

  it.each(PINS)('$spec/$file.schema.json carries its canonical $id and $schema const', ({ spec, file }) => {
    const schema = PINNED_SCHEMAS[spec][file];
    const id = file === 'plugin' ? pluginSchemaId(spec) : mcpSchemaId(spec);
    expect(schema.$id).toBe(id);
    expect(schema.properties.$schema.const).toBe(id);
  });

  it.each(PINS)('$spec/$file.schema.json compiles in strict mode offline', ({ spec, file }) => {
    const ajv = new Ajv2020({ strict: true, strictTypes: false });
    expect(() => ajv.compile(PINNED_SCHEMAS[spec][file])).not.toThrow();
  });

  it('the pinned schemas are frozen so no caller can change what others validate with', () => {
    expect(Object.isFrozen(PINNED_SCHEMAS['1.0.0'].plugin.properties)).toBe(true);
  });

  it('every supported version has a pin for both files', () => {
    expect(SPEC_VERSIONS.flatMap((spec) => ['plugin', 'mcp'].map((file) => `${spec}/${file}`))).toEqual(
      [...PINS]
        .sort((a, b) => a.spec.localeCompare(b.spec) || b.file.localeCompare(a.file))
        .map((p) => `${p.spec}/${p.file}`),
    );
  });

  it.each([
    ['https://agent-plugins.org/schemas/1.0.0/plugin.schema.json', '1.0.0', undefined],
    ['https://agent-plugins.org/schemas/1.1.0/plugin.schema.json', '1.1.0', undefined],
    ['https://agent-plugins.org/schemas/1.1.0/mcp.schema.json', undefined, '1.1.0'],
    ['https://agent-plugins.org/schemas/1.0.0/plugin.schema.json/', undefined, undefined],
    ['http://agent-plugins.org/schemas/1.0.0/plugin.schema.json', undefined, undefined],
    ['https://agent-plugins.org/schemas/2.0.0/plugin.schema.json', undefined, undefined],
  ])('a $schema is recognized only when it is exactly a canonical id: %s', (id, plugin, mcp) => {
    expect(specOfPluginSchemaId(id)).toBe(plugin);
    expect(specOfMcpSchemaId(id)).toBe(mcp);
  });
});
