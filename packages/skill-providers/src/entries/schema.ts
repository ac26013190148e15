import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
// The published copies under /schemas are the only copies: tsup inlines them into dist,
// vitest imports them from source. Nothing is ever fetched.
import lockSchema from '../../../../schemas/skills/1/skills-lock.schema.json' with { type: 'json' };
import declarationSchema from '../../../../schemas/skills/1/skills.schema.json' with { type: 'json' };

/** `$id` of the skills declaration schema (schemas/skills/1/skills.schema.json). */
export const SKILLS_SCHEMA_ID = 'https://agentproto.sh/schemas/skills/1/skills.schema.json';
/** `$id` of the skills lock file schema (schemas/skills/1/skills-lock.schema.json). */
export const SKILLS_LOCK_SCHEMA_ID = 'https://agentproto.sh/schemas/skills/1/skills-lock.schema.json';

interface Validators {
  /** The whole declaration schema: an array or `{ skills: [...] }`. */
  document: ValidateFunction;
  /** Its `$defs/declaration`: an array of entries. */
  declaration: ValidateFunction;
  lock: ValidateFunction;
}

let validators: Validators | undefined;

/** Compiled once, on first use: a process that never reads a declaration never pays for Ajv. */
function compiled(): Validators {
  if (validators) return validators;
  // Errors stop at the first: the parser, not Ajv, words what the caller sees.
  const ajv = new Ajv2020({ allErrors: false, strict: true, strictTypes: false });
  ajv.addSchema(structuredClone(declarationSchema));
  ajv.addSchema(structuredClone(lockSchema));
  validators = {
    document: ajv.getSchema(SKILLS_SCHEMA_ID)!,
    declaration: ajv.getSchema(`${SKILLS_SCHEMA_ID}#/$defs/declaration`)!,
    lock: ajv.getSchema(SKILLS_LOCK_SCHEMA_ID)!,
  };
  return validators;
}

/** The first problem the schema finds (`instancePath`, Ajv's message), or undefined when it holds. */
export function schemaProblem(
  kind: keyof Validators,
  value: unknown,
): { path: string; message: string; error: ErrorObject } | undefined {
  const validate = compiled()[kind];
  if (validate(value)) return undefined;
  const error = validate.errors?.[0];
  if (!error) return { path: '', message: 'does not match the schema', error: { keyword: 'unknown' } as ErrorObject };
  return { path: error.instancePath, message: error.message ?? 'does not match the schema', error };
}
