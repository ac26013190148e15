import { createRequire } from 'node:module';
import type { Ajv2020, Options } from 'ajv/dist/2020.js';
import { CODE_VALIDATORS } from '../generated/validators.js';
import { codeSchemas } from './code-schema.js';
import type { CheckResult, SchemaProblem } from './errors.js';
import { CODE_AJV_OPTIONS } from './options.js';
import { discriminatorMessage, explainSchemaErrors, problemId } from './problems.js';

export { CODE_AJV_OPTIONS } from './options.js';

/**
 * Adds AIP-26's schema to a host's Ajv under both ids, so a host manifest schema that
 * `$ref`s `https://agentproto.sh/…` or `https://agentproto.dev/…CODE.schema.json#/$defs/…`
 * compiles offline. The Ajv must speak JSON Schema 2020-12 (`ajv/dist/2020`). Idempotent.
 */
export function addCodeSchemas<A extends Ajv2020>(ajv: A): A {
  for (const schema of codeSchemas) {
    const id = schema.$id as string;
    if (ajv.getSchema(id) !== undefined) continue;
    try {
      ajv.addSchema(schema);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new TypeError(
        `cannot add ${id} to this Ajv (it needs JSON Schema 2020-12: import { Ajv2020 } from "ajv/dist/2020.js"): ${reason}`,
        { cause: error },
      );
    }
  }
  return ajv;
}

/**
 * Ajv's compiler, loaded by the first createCodeValidator: the checks below run validators
 * compiled at build (src/generated/validators.ts) and never load it. Loading Ajv and compiling
 * CODE.schema.json at the first check took ~200 ms of CPU, most of a CLI command's start.
 */
let ajvClass: typeof Ajv2020 | undefined;

/** A new 2020-12 Ajv with `CODE_AJV_OPTIONS` (overridable) and both AIP-26 schemas added. */
export function createCodeValidator(options: Options = {}): Ajv2020 {
  ajvClass ??= (createRequire(import.meta.url)('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020;
  return addCodeSchemas(new ajvClass({ ...CODE_AJV_OPTIONS, ...options }));
}

export interface CheckOptions {
  /** Where the value sits in its manifest (`'/code'`): prefixed to every problem's pointer. Default `''`. */
  pointer?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const SOURCE_KEYS = ['inline', 'local', 'github', 'ref'];
const RUN_KEYS = ['file', 'exec', 'shell'];

/**
 * The schema's `oneOf` lets `{ inline: <invalid>, local: <valid> }` through: exactly one
 * branch passes. A source (or explicit `run`) with two discriminators is ambiguous whatever
 * their values, so we report it too, with the message the collapsed `oneOf` would give.
 */
function ambiguousDiscriminators(value: unknown, keys: readonly string[], pointer: string): SchemaProblem[] {
  if (!isObject(value)) return [];
  const found = keys.filter((k) => Object.hasOwn(value, k));
  return found.length > 1 ? [{ pointer, message: discriminatorMessage(keys, found), keyword: 'oneOf' }] : [];
}

function codeAmbiguities(code: unknown, at: string): SchemaProblem[] {
  if (!isObject(code) || !Array.isArray(code.sources)) return [];
  return code.sources.flatMap((source, i) => ambiguousDiscriminators(source, SOURCE_KEYS, `${at}/sources/${i}`));
}

/**
 * The most sources a code block may list. Ajv gathers the errors of each source by copying
 * every error so far (`concat`), so checking n bad sources costs n²: 60,000 of them took
 * minutes. A longer list gets this one problem instead of a schema check, which stays fast
 * up to here.
 */
const MAX_CODE_SOURCES = 1_000;

function tooManySources(code: unknown, at: string): SchemaProblem | undefined {
  if (!isObject(code) || !Array.isArray(code.sources) || code.sources.length <= MAX_CODE_SOURCES) return undefined;
  return {
    pointer: `${at}/sources`,
    message: `must NOT have more than ${MAX_CODE_SOURCES} items (it has ${code.sources.length})`,
    keyword: 'maxItems',
  };
}

function check(def: keyof typeof CODE_VALIDATORS, value: unknown, prefix: string, extra: SchemaProblem[]): CheckResult {
  const tooMany =
    def === 'code'
      ? tooManySources(value, prefix)
      : def === 'codeWorkspaceManifest' && isObject(value)
        ? tooManySources(value.code, `${prefix}/code`)
        : undefined;
  if (tooMany !== undefined) return { ok: false, problems: [tooMany] };
  const validate = CODE_VALIDATORS[def];
  const problems = validate(value) ? [] : explainSchemaErrors(validate.errors, { pointer: prefix });
  const seen = new Set(problems.map(problemId));
  for (const p of extra) if (!seen.has(problemId(p))) problems.push(p);
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}

/**
 * Checks a `code` block (string shorthand or `{ sources }`) against `$defs/code`, and
 * reports a source with two kinds (`{ inline, local }`), which the schema's `oneOf` would let
 * through. Never throws for a bad value: every problem is in the result, with a JSON pointer.
 *
 * @example
 * ```ts
 * import { checkCode } from '@agentproto/aip-26';
 *
 * const result = checkCode(manifest.code, { pointer: '/code' });
 * if (!result.ok) for (const p of result.problems) console.error(`${p.pointer}: ${p.message}`);
 * ```
 */
export function checkCode(value: unknown, options: CheckOptions = {}): CheckResult {
  const at = options.pointer ?? '';
  return check('code', value, at, codeAmbiguities(value, at));
}

/** Checks a `run` block (string, argv array, or `{ file | exec | shell }`) against `$defs/run`. */
export function checkRun(value: unknown, options: CheckOptions = {}): CheckResult {
  const at = options.pointer ?? '';
  return check('run', value, at, ambiguousDiscriminators(value, RUN_KEYS, at));
}

/** Checks a whole `kind: code-workspace` manifest against `$defs/codeWorkspaceManifest`. */
export function checkCodeWorkspaceManifest(value: unknown, options: CheckOptions = {}): CheckResult {
  const at = options.pointer ?? '';
  const extra = isObject(value)
    ? [...codeAmbiguities(value.code, `${at}/code`), ...ambiguousDiscriminators(value.run, RUN_KEYS, `${at}/run`)]
    : [];
  return check('codeWorkspaceManifest', value, at, extra);
}
