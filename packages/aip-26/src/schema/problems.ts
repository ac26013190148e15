import type { ErrorObject } from 'ajv/dist/2020.js';
import type { SchemaProblem } from './errors.js';

/*
 * Ajv reports a failed `oneOf` as one error per branch plus the `oneOf` itself: a source
 * with a bad `inline.path` also "must have required property 'local'", "'github'", "'ref'",
 * and a `run` of `5` "must be string", "must be array", "must be object". We collapse that:
 * the branches the value was *meant* for are those of its type, narrowed, when several
 * share the type, to those whose required keys (the discriminator) it has. Errors of the
 * other branches are noise and dropped; if no branch is left, or several pass, one problem
 * says what was expected. This needs Ajv's `verbose` errors (the branch schemas travel in
 * `error.schema`); without them the errors are only translated, one by one.
 */

type Json = unknown;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function jsonType(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(type: unknown, value: Json): boolean {
  const types = Array.isArray(type) ? type : [type];
  const actual = jsonType(value);
  return types.some((t) => t === actual || (t === 'number' && actual === 'integer'));
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  object: 'an object',
  array: 'an array',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  null: 'null',
};

function listOr(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

const quoteKeys = (keys: readonly string[]) => keys.map((k) => JSON.stringify(k)).join(', ');

/**
 * The message for an object that must carry exactly one discriminator key. Shared with the
 * extra check of `checkCode`/`checkRun`, so a problem found both ways is reported once.
 */
export function discriminatorMessage(
  keys: readonly string[],
  found: readonly string[],
  own: readonly string[] = [],
): string {
  if (found.length === 0) {
    const other = own.length === 0 ? '' : ` (it has ${quoteKeys(own.slice(0, 5))}${own.length > 5 ? ', …' : ''})`;
    return `must have exactly one of the keys ${quoteKeys(keys)}; found none${other}`;
  }
  return `must have exactly one of the keys ${quoteKeys(keys)}; found ${quoteKeys(found)}`;
}

/** Whether `value` has the branch's declared type (a branch without one may take any). */
function typeFits(branch: unknown, value: Json): boolean {
  if (branch === false) return false;
  if (!isObject(branch) || !('type' in branch)) return true;
  return typeMatches(branch.type, value);
}

/** Whether `value` (an object) has every key the branch requires. */
function keysFit(branch: unknown, value: Json): boolean {
  if (!isObject(branch) || !Array.isArray(branch.required) || !isObject(value)) return true;
  return branch.required.every((key) => typeof key === 'string' && Object.hasOwn(value, key));
}

/**
 * The branches `value` was meant for. The type decides first; required keys decide only
 * between branches of the same type (the four source kinds, the three explicit `run`
 * forms): an object missing `sources` is still meant for the object branch of `code`.
 */
function candidatesFor(branches: readonly unknown[], value: Json): { typed: number[]; candidates: number[] } {
  const typed = branches.flatMap((b, i) => (typeFits(b, value) ? [i] : []));
  const candidates = typed.length > 1 ? typed.filter((i) => keysFit(branches[i], value)) : typed;
  return { typed, candidates };
}

/** The single required key of each branch, when every branch has exactly one. */
function discriminatorKeys(branches: readonly unknown[]): string[] | undefined {
  const keys: string[] = [];
  for (const branch of branches) {
    if (!isObject(branch) || !Array.isArray(branch.required) || branch.required.length !== 1) return undefined;
    const key = branch.required[0];
    if (typeof key !== 'string') return undefined;
    keys.push(key);
  }
  return keys;
}

const subtrees = new WeakMap<object, Set<unknown>>();

/** Every object and array inside `schema` (not following `$ref`), iteratively. */
function subtree(schema: object): Set<unknown> {
  const cached = subtrees.get(schema);
  if (cached) return cached;
  const seen = new Set<unknown>();
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    for (const child of Object.values(node)) stack.push(child);
  }
  subtrees.set(schema, seen);
  return seen;
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** What the value at a collapsed `oneOf` should have been, when no branch fits it. */
function noCandidateMessage(branches: readonly unknown[], typed: readonly number[], value: Json): string {
  if (typed.length === 0) {
    const names: string[] = [];
    for (const branch of branches) {
      const types = isObject(branch) ? branch.type : undefined;
      for (const t of Array.isArray(types) ? types : [types]) {
        const name = typeof t === 'string' ? (TYPE_NAMES[t] ?? t) : undefined;
        if (name && !names.includes(name)) names.push(name);
      }
    }
    if (names.length > 0) return `must be ${listOr(names)}`;
  }
  const keys = discriminatorKeys(typed.map((i) => branches[i]));
  if (keys && isObject(value)) return discriminatorMessage(keys, [], Object.keys(value));
  return 'does not match any of the allowed forms';
}

function severalMessage(branches: readonly unknown[], value: Json): string {
  const keys = discriminatorKeys(branches);
  if (keys && isObject(value))
    return discriminatorMessage(
      keys,
      keys.filter((k) => Object.hasOwn(value, k)),
    );
  return 'matches more than one of the allowed forms; it must match exactly one';
}

/** One Ajv error in words. Returns the pointer too: some keywords point below the instance. */
function describe(error: ErrorObject): { pointer: string; message: string } {
  const params = error.params as Record<string, unknown>;
  const at = error.instancePath;
  switch (error.keyword) {
    case 'type': {
      const types = Array.isArray(params.type) ? params.type : String(params.type).split(',');
      return { pointer: at, message: `must be ${listOr(types.map((t) => TYPE_NAMES[String(t)] ?? String(t)))}` };
    }
    case 'minLength':
      return {
        pointer: at,
        message: params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long`,
      };
    case 'maxLength':
      return { pointer: at, message: `must be at most ${String(params.limit)} characters long` };
    case 'minItems':
      return {
        pointer: at,
        message:
          params.limit === 1 ? 'must have at least one item' : `must have at least ${String(params.limit)} items`,
      };
    case 'maxItems':
      return { pointer: at, message: `must have at most ${String(params.limit)} items` };
    case 'required':
      return { pointer: at, message: `is missing the required property ${JSON.stringify(params.missingProperty)}` };
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const properties =
        isObject(error.parentSchema) && isObject(error.parentSchema.properties)
          ? Object.keys(error.parentSchema.properties)
          : [];
      const allowed = properties.length > 0 ? ` (allowed: ${properties.join(', ')})` : '';
      return { pointer: `${at}/${escapePointer(name)}`, message: `is not an allowed property${allowed}` };
    }
    case 'pattern':
      // The two patterns of CODE.schema.json, in words.
      if (params.pattern === '^[^/].*') {
        return {
          pointer: at,
          message: error.data === '' ? 'must not be empty' : 'must not start with "/": it is a workspace-relative path',
        };
      }
      if (params.pattern === '^[^/]+/[^/]+$') return { pointer: at, message: 'must have the form "<owner>/<name>"' };
      return { pointer: at, message: `must match the pattern ${String(params.pattern)}` };
    case 'const':
      return { pointer: at, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'enum':
      return {
        pointer: at,
        message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    default:
      return { pointer: at, message: error.message ?? `fails "${error.keyword}"` };
  }
}

/** Identity of a problem, for reporting each once. */
export const problemId = (p: SchemaProblem): string => `${p.pointer}\0${p.keyword}\0${p.message}`;

const isBranching = (e: ErrorObject) => (e.keyword === 'oneOf' || e.keyword === 'anyOf') && Array.isArray(e.schema);

export interface ExplainOptions {
  /** Prefixed to every pointer: the place of the validated value in its manifest (`'/code'`). */
  pointer?: string;
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** `/a/b` → `''`, `/a`, `/a/b`: the JSON pointers a value at `path` lies at or under. */
function pathAndAncestors(path: string): string[] {
  const paths = [''];
  for (let slash = path.indexOf('/', 1); slash !== -1; slash = path.indexOf('/', slash + 1)) {
    paths.push(path.slice(0, slash));
  }
  if (path !== '') paths.push(path);
  return paths;
}

/**
 * Ajv errors → problems: every problem once, in Ajv's order, with readable messages and
 * `oneOf` noise collapsed (see above). Works on errors of any schema that uses the AIP-26
 * definitions, such as a host manifest schema that `$ref`s them, if its Ajv has `verbose`.
 */
export function explainSchemaErrors(
  errors: readonly ErrorObject[] | null | undefined,
  options: ExplainOptions = {},
): SchemaProblem[] {
  const list = errors ?? [];
  const dropped = new Set<ErrorObject>();
  const replaced = new Map<ErrorObject, string>();
  // Each collapsed `oneOf` looks only at the errors at and under its own value, found through
  // these indexes: scanning the whole list for each one made a block of n bad sources cost n².
  const typeErrorsAt = new Map<string, ErrorObject[]>();
  const errorsUnder = new Map<string, ErrorObject[]>();
  for (const e of list) {
    if (e.keyword === 'type') pushTo(typeErrorsAt, e.instancePath, e);
    for (const path of pathAndAncestors(e.instancePath)) pushTo(errorsUnder, path, e);
  }

  for (const branching of list.filter(isBranching)) {
    const branches = branching.schema as unknown[];
    const value = branching.data;
    const passing = (branching.params as { passingSchemas?: unknown }).passingSchemas;
    const several = Array.isArray(passing);
    const { typed, candidates: fitting } = candidatesFor(branches, value);
    // A `oneOf` beside a `type` that already failed (`source` is `type: object` + `oneOf`)
    // has nothing to say about a string: the type error says it all.
    const typeFailed = (typeErrorsAt.get(branching.instancePath) ?? []).some((e) =>
      e.parentSchema !== undefined
        ? e.parentSchema === branching.parentSchema
        : e.schemaPath === branching.schemaPath.replace(/[^/]+$/, 'type'),
    );
    // Errors of which branches are noise: all of them if the value fits several (the problem
    // is the ambiguity), none, or has the wrong type altogether; otherwise the other branches'.
    const noise = branches.flatMap((_, i) =>
      typeFailed || several || fitting.length === 0 || !fitting.includes(i) ? [i] : [],
    );
    // An error belongs to branch i if its schema object lies in that branch (verbose errors
    // carry it; this holds across inlined `$ref`s), or if its schema path runs through it.
    const inBranch = (e: ErrorObject, i: number) => {
      const branch = branches[i];
      if (branch !== null && typeof branch === 'object' && subtree(branch).has(e.parentSchema)) return true;
      return e.schemaPath.startsWith(`${branching.schemaPath}/${i}/`);
    };
    // The errors inside the value: at its own path or under it.
    for (const e of errorsUnder.get(branching.instancePath) ?? []) {
      if (e !== branching && noise.some((i) => inBranch(e, i))) dropped.add(e);
    }
    if (typeFailed) dropped.add(branching);
    else if (several) replaced.set(branching, severalMessage(branches, value));
    else if (fitting.length === 0) replaced.set(branching, noCandidateMessage(branches, typed, value));
    else if (fitting.length === 1 || branching.keyword === 'anyOf') dropped.add(branching);
    else replaced.set(branching, 'does not match any of the allowed forms; the problems with each follow');
  }

  const prefix = options.pointer ?? '';
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const e of list) {
    if (dropped.has(e)) continue;
    const replacement = replaced.get(e);
    const { pointer, message } =
      replacement === undefined ? describe(e) : { pointer: e.instancePath, message: replacement };
    const problem = { pointer: prefix + pointer, message, keyword: e.keyword };
    const id = problemId(problem);
    if (seen.has(id)) continue;
    seen.add(id);
    problems.push(problem);
  }
  return problems;
}
