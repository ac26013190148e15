import type { SchemaObject } from 'ajv/dist/2020.js';
// The pinned copies under /schemas are the only copies: tsup inlines them into both the ESM
// and the CJS build, vitest imports them from source, and nothing is ever fetched (§5.2,
// §7.2.1: a client must not retrieve a schema while loading a plugin).
import mcp100 from '../../../schemas/agent-plugins/1.0.0/mcp.schema.json' with { type: 'json' };
import plugin100 from '../../../schemas/agent-plugins/1.0.0/plugin.schema.json' with { type: 'json' };
import mcp110 from '../../../schemas/agent-plugins/1.1.0/mcp.schema.json' with { type: 'json' };
import plugin110 from '../../../schemas/agent-plugins/1.1.0/plugin.schema.json' with { type: 'json' };

/** The Agent Plugins versions this package reads and writes; 1.0.0 is the published default. */
export const SPEC_VERSIONS = ['1.0.0', '1.1.0'] as const;
export type SpecVersion = (typeof SPEC_VERSIONS)[number];
export const DEFAULT_SPEC_VERSION: SpecVersion = '1.0.0';

/** The canonical `$schema` of plugin.json for a version (§5.2). */
export function pluginSchemaId(spec: SpecVersion): string {
  return `https://agent-plugins.org/schemas/${spec}/plugin.schema.json`;
}

/** The canonical `$schema` of mcp.json for a version (§7.2.1). */
export function mcpSchemaId(spec: SpecVersion): string {
  return `https://agent-plugins.org/schemas/${spec}/mcp.schema.json`;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export interface PinnedSchemas {
  plugin: SchemaObject;
  mcp: SchemaObject;
}

/**
 * The official schemas, by version, as published (frozen, so no caller can change what
 * another validates with). Their bytes are pinned by SHA-256 in the tests.
 */
export const PINNED_SCHEMAS: Readonly<Record<SpecVersion, PinnedSchemas>> = deepFreeze({
  '1.0.0': { plugin: structuredClone(plugin100) as SchemaObject, mcp: structuredClone(mcp100) as SchemaObject },
  '1.1.0': { plugin: structuredClone(plugin110) as SchemaObject, mcp: structuredClone(mcp110) as SchemaObject },
});

/** The version whose plugin.json `$schema` is exactly `id`, or undefined for any other value. */
export function specOfPluginSchemaId(id: unknown): SpecVersion | undefined {
  return SPEC_VERSIONS.find((spec) => pluginSchemaId(spec) === id);
}

/** The version whose mcp.json `$schema` is exactly `id`, or undefined for any other value. */
export function specOfMcpSchemaId(id: unknown): SpecVersion | undefined {
  return SPEC_VERSIONS.find((spec) => mcpSchemaId(spec) === id);
}
