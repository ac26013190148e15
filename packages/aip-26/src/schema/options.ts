import type { Options } from 'ajv/dist/2020.js';

/**
 * The Ajv options the checks use: every error (not the first), the schema beside each error
 * (`verbose`, which `explainSchemaErrors` needs to collapse `oneOf` noise), and strict mode
 * (unknown keywords are errors) without `strictTypes`. CODE.schema.json passes full strict
 * mode as published, but host schemas compiled with this Ajv need not: the usage skill's
 * own step 1 (`{ "properties": { "code": { "$ref": … } } }`, no `"type": "object"`) fails
 * `strictTypes`, and it is valid JSON Schema.
 */
export const CODE_AJV_OPTIONS: Readonly<Options> = Object.freeze({
  allErrors: true,
  verbose: true,
  strict: true,
  strictTypes: false,
});
