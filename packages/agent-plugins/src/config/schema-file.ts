import type { SchemaObject } from 'ajv/dist/2020.js';
// The file under /schemas is the only copy: the loader's validators are compiled from it at
// build (scripts/validators.ts), tsup inlines it into both the ESM and the CJS build, and
// editors read it by its $id.
import published from '../../../../schemas/plugin-config/1/plugin-config.schema.json' with { type: 'json' };

/** The `$id` of the plugin configuration's JSON Schema (a JSON file's `$schema`, an editor's schema URL). */
export const PLUGIN_CONFIG_SCHEMA_ID = 'https://agentproto.sh/schemas/plugin-config/1/plugin-config.schema.json';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The JSON Schema of a plugin configuration file (TOML, YAML or JSON, either spelling of
 * each key), frozen: the one loadPluginConfig and normalizePluginConfig validate with.
 */
export const PLUGIN_CONFIG_SCHEMA: Readonly<SchemaObject> = deepFreeze(structuredClone(published) as SchemaObject);
