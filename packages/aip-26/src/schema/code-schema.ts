import type { SchemaObject } from 'ajv/dist/2020.js';
// The published copy under /schemas is the only copy: tsup inlines it into dist, vitest
// imports it from source.
import published from '../../../../schemas/aip-26/CODE.schema.json' with { type: 'json' };
import { CODE_SCHEMA_ID, CODE_SCHEMA_LEGACY_ID } from './ids.js';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function withId(id: string): SchemaObject {
  // A deep copy per id: Ajv caches compiled schemas by object identity, so two registrations
  // must not share sub-objects, and a host can never mutate what another host validates with.
  const copy = structuredClone(published) as SchemaObject;
  copy.$id = id;
  return deepFreeze(copy);
}

/** AIP-26 `CODE.schema.json` as published, `$id` https://agentproto.sh/schemas/aip-26/CODE.schema.json. Frozen. */
export const codeSchema: SchemaObject = withId(CODE_SCHEMA_ID);

/** The same schema under the agentproto.dev `$id` that the usage skill's `$ref`s name. Frozen. */
export const codeSchemaLegacy: SchemaObject = withId(CODE_SCHEMA_LEGACY_ID);

/** Both registrations, canonical first. */
export const codeSchemas: readonly SchemaObject[] = Object.freeze([codeSchema, codeSchemaLegacy]);
