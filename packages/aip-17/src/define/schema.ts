import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, SchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
// The published copy under /schemas is the only copy: tsup inlines it into dist, vitest
// imports it from source.
import published from '../../../../schemas/aip-17/RUNNER.schema.json' with { type: 'json' };
import type { RunnerProblem } from './errors.js';

/** The `$id` of the AIP-17 runner schema. */
const RUNNER_SCHEMA_ID = 'https://agentproto.sh/schemas/aip-17/RUNNER.schema.json';

// Compiled once, on first use: importing this module compiles nothing.
let validateRunnerBlock: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (validateRunnerBlock === undefined) {
    // A copy, so Ajv never holds (or annotates) the module's JSON object.
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
    ajv.addSchema(structuredClone(published) as SchemaObject);
    validateRunnerBlock = ajv.getSchema(`${RUNNER_SCHEMA_ID}#/$defs/runner`) as ValidateFunction;
  }
  return validateRunnerBlock;
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The properties each object of the block may have, for the message about one it may not. */
const ALLOWED: Readonly<Record<string, string>> = {
  '': 'engine, image, needs, limits',
  '/needs': 'language, native, npm, pip',
  '/limits': 'memory_mb, timeout_ms, cpu_ms',
};

/** One Ajv error in words, at the pointer of the offending value. */
function describe(error: ErrorObject): RunnerProblem {
  const params = error.params as Record<string, unknown>;
  const at = error.instancePath;
  switch (error.keyword) {
    case 'type':
      return { pointer: at, message: `must be ${params.type === 'integer' ? 'an integer' : `of type ${params.type}`}` };
    case 'enum':
      return {
        pointer: at,
        message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'additionalProperties':
      return {
        pointer: `${at}/${escapePointer(String(params.additionalProperty))}`,
        message: `is not an allowed property (allowed: ${ALLOWED[at] ?? 'see RUNNER.schema.json'})`,
      };
    case 'minLength':
      return { pointer: at, message: 'must not be empty' };
    case 'minimum':
      return { pointer: at, message: `must be at least ${String(params.limit)}` };
    case 'pattern':
      return { pointer: at, message: 'must have the form <name>@<semver>' };
    default:
      return { pointer: at, message: error.message ?? `fails "${error.keyword}"` };
  }
}

/** The schema problems of a plain runner block (no composition form), each pointer prefixed. */
export function runnerSchemaProblems(value: unknown, prefix = ''): RunnerProblem[] {
  const validate = validator();
  if (validate(value)) return [];
  const problems: RunnerProblem[] = [];
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    const problem = describe(error);
    const key = `${problem.pointer}\0${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push({ pointer: prefix + problem.pointer, message: problem.message });
  }
  return problems;
}
