import Ajv2020 from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { DEFAULT_SPEC_VERSION, PINNED_SCHEMAS, mcpSchemaId } from '../schemas.js';

// The server definitions are the same in every pinned version (a test pins that), so one
// compiled validator serves both. Compiled on first use and never changed, so checks stay
// pure; strictTypes is off for the same reason as in manifest.ts (a `const` without `type`).
let validateServer: ValidateFunction | undefined;

/**
 * Whether the official `#/$defs/server` accepts `entry`. The code checks report every rule
 * with its own finding; this is the backstop that keeps them from ever accepting an entry the
 * published schema refuses.
 */
export function serverSchemaAccepts(entry: unknown): boolean {
  if (validateServer === undefined) {
    const ajv = new Ajv2020({ allErrors: false, strict: true, strictTypes: false });
    ajv.addSchema(PINNED_SCHEMAS[DEFAULT_SPEC_VERSION].mcp);
    const validate = ajv.getSchema(`${mcpSchemaId(DEFAULT_SPEC_VERSION)}#/$defs/server`);
    if (validate === undefined) throw new Error('the pinned mcp.schema.json has no #/$defs/server');
    validateServer = validate;
  }
  return validateServer(entry) === true;
}
