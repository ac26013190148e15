import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { PINNED_SCHEMAS, checkPluginManifest, importPlugin, validatePlugin } from '../../src/index.js';
import { pluginSchemaId } from '../../src/schemas.js';
import { type PluginSandbox, sandboxesRemovedAfterEach } from '../support/read-fixtures.js';
import { MCP_100, MCP_110, json, skillMd } from '../support/validate-packages.js';

// Agent Plugins 1.0.0 (reference/agent-plugins/1.0.0/spec.md):
// §5.2: "Any schema violation other than an unknown top-level field or a non-object
//   `extensions` field is fatal: the client MUST reject the plugin".
// plugin.schema.json: `extensions` is `{ "type": "object", "additionalProperties": { "type": "object" } }`,
//   with no pattern on its keys.
// §8.1: "A client MUST ignore manifest entries for namespaces it does not implement without
//   validating the contents of their values."
// §11.1 item 3: a conformant client "Ignores unimplemented members of `extensions` without
//   validating the contents of their values."
// So in 1.0.0 a key that is not reverse-domain is reported and ignored, and the plugin loads.
//
// Agent Plugins 1.1.0 draft (reference/agent-plugins/1.1.0-draft/spec.md) §5.2: "Any manifest
//   violation other than an unknown top-level field, a non-object `extensions` field, or a
//   string `presentation.icon` value that violates only the plugin-relative path requirements
//   of §5.7.2 is fatal", and §8: "Client-specific manifest data MUST be represented under a
//   reverse-domain namespace in `extensions`." So in 1.1.0 the same key rejects the plugin.

const sandbox = sandboxesRemovedAfterEach();

const KEYS = ['my_client', 'Com.Example', 'openai', ''] as const;

/** A package of `spec` with a skill, a server and extensions holding a good namespace and `key`. */
function packageWith(
  box: PluginSandbox,
  spec: '1.0.0' | '1.1.0',
  key: string,
  value: unknown = { setting: true },
): void {
  box.file(
    'plugin.json',
    json({
      $schema: pluginSchemaId(spec),
      name: 'p',
      extensions: { 'com.example.client': { setting: true }, [key]: value },
    }),
  );
  box.file('skills/review/SKILL.md', skillMd('review'));
  box.file(
    'mcp.json',
    json({
      $schema: spec === '1.0.0' ? MCP_100 : MCP_110,
      mcpServers: { remote: { type: 'streamable-http', url: 'https://mcp.example.com/mcp' } },
    }),
  );
}

describe('1.0.0 §5.2, §8.1, §11.1 item 3: a key of extensions that is not reverse-domain is reported and ignored', () => {
  it('the pinned 1.0.0 schema itself accepts such a key: it is no schema violation', () => {
    const validate = new Ajv2020({ strict: true, strictTypes: false }).compile(PINNED_SCHEMAS['1.0.0'].plugin);
    for (const key of KEYS)
      expect(validate({ $schema: pluginSchemaId('1.0.0'), name: 'p', extensions: { [key]: {} } }), key).toBe(true);
  });

  it.each(KEYS.map((key) => [key]))(
    '%j: the plugin loads, with a warning of its own code at the key; the namespace is dropped',
    (key) => {
      const result = checkPluginManifest({
        $schema: pluginSchemaId('1.0.0'),
        name: 'p',
        extensions: { 'com.example.client': { a: 1 }, [key]: { b: 2 } },
      });
      expect(result.rejected).toBe(false);
      expect(result.manifest?.extensions).toEqual({ 'com.example.client': { a: 1 } });
      expect(result.findings).toEqual([
        expect.objectContaining({
          code: 'plugin.extension-namespace-ignored',
          rule: 'AR9O0',
          severity: 'warning',
          path: `plugin.json#/extensions/${key}`,
        }),
      ]);
    },
  );

  it('its value is not validated, but a value that is not an object still breaks the schema and is fatal', () => {
    const anything = checkPluginManifest({
      $schema: pluginSchemaId('1.0.0'),
      name: 'p',
      extensions: { my_client: { deep: [null, { x: NaN }] } },
    });
    expect(anything.rejected).toBe(false);
    const notObject = checkPluginManifest({
      $schema: pluginSchemaId('1.0.0'),
      name: 'p',
      extensions: { my_client: 'on' },
    });
    expect(notObject.rejected).toBe(true);
    expect(notObject.findings.map((f) => `${f.code} ${f.severity}`)).toContain('plugin.schema-violation error');
  });

  it('validatePlugin loads the skills and servers of a 1.0.0 package with such a key', async () => {
    const box = sandbox();
    packageWith(box, '1.0.0', 'my_client');
    const result = await validatePlugin(box.root);
    expect(result).toMatchObject({
      spec: '1.0.0',
      rejected: false,
      skills: ['review'],
      servers: ['remote'],
      mcpDisabled: false,
    });
    expect(result.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'plugin.extension-namespace-ignored warning plugin.json#/extensions/my_client',
    ]);
  });

  it('importPlugin imports the plugin and reports the ignored namespace, which config.extensions leaves out', async () => {
    const box = sandbox();
    packageWith(box, '1.0.0', 'my_client');
    const imported = await importPlugin(box.root);
    expect(imported.rejected).toBe(false);
    expect(imported.config?.extensions).toEqual({ 'com.example.client': { setting: true } });
    expect(imported.report).toContainEqual({
      path: 'plugin.json#/extensions/my_client',
      reason: 'ignored by a conformant client; not imported',
    });
  });
});

describe('1.1.0 draft §5.2: the same key is a manifest violation, and fatal', () => {
  it.each(KEYS.map((key) => [key]))('%j rejects the plugin with plugin.extension-namespace-invalid', (key) => {
    const result = checkPluginManifest({
      $schema: pluginSchemaId('1.1.0'),
      name: 'p',
      extensions: { 'com.example.client': {}, [key]: {} },
    });
    expect(result.rejected).toBe(true);
    expect(result.manifest).toBeUndefined();
    expect(result.findings).toEqual([
      expect.objectContaining({
        code: 'plugin.extension-namespace-invalid',
        rule: 'AR9O0',
        severity: 'error',
        path: `plugin.json#/extensions/${key}`,
      }),
    ]);
  });

  it('validatePlugin rejects a 1.1.0 package with such a key: no skill or server is loaded', async () => {
    const box = sandbox();
    packageWith(box, '1.1.0', 'my_client');
    const result = await validatePlugin(box.root);
    expect(result).toMatchObject({ spec: '1.1.0', rejected: true, skills: [], servers: [] });
    expect(result.findings.map((f) => `${f.code} ${f.severity}`)).toEqual(['plugin.extension-namespace-invalid error']);
  });
});
