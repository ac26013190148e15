/** The canonical `$id` of the AIP-26 schema (the spec moved it from agentproto.dev). */
export const CODE_SCHEMA_ID = 'https://agentproto.sh/schemas/aip-26/CODE.schema.json';

/**
 * The `$id` the AIP-26 usage skill (and so existing host schemas) still `$ref`: the same
 * schema, registered a second time under this name so both resolve offline.
 */
export const CODE_SCHEMA_LEGACY_ID = 'https://agentproto.dev/schemas/aip-26/CODE.schema.json';

/** The definitions a host manifest schema may `$ref` (`<id>#/$defs/<name>`). */
export type CodeSchemaDef = 'code' | 'run' | 'source' | 'codeWorkspaceManifest';

/** `https://agentproto.sh/schemas/aip-26/CODE.schema.json#/$defs/<def>`, for `$ref`. */
export function codeSchemaRef(def: CodeSchemaDef, id: string = CODE_SCHEMA_ID): string {
  return `${id}#/$defs/${def}`;
}
