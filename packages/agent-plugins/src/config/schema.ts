import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { PLUGIN_CONFIG_SCHEMA } from './schema-file.js';
import { levenshtein } from '#libraries';
import { CONFIG_VALIDATORS } from '../generated/validators.js';

/** The seed's spellings of the keys this package names in camelCase. */
export const SNAKE: Readonly<Record<string, string>> = {
  version_from: 'versionFrom',
  content_root: 'contentRoot',
  shared_resources: 'sharedResources',
  provenance_headers: 'provenanceHeaders',
  package_manager: 'packageManager',
  opencode_dependency: 'opencodeDependency',
  skills_dir: 'skillsDir',
  package_json: 'packageJson',
};

// Compiled at build from the file under /schemas (scripts/validators.ts, Ajv standalone), so
// loading the package loads no schema compiler.
function compiled(): Readonly<{ document: ValidateFunction; plugin: ValidateFunction }> {
  return CONFIG_VALIDATORS;
}

/** The first way `value` breaks the schema, as the key it names (camelCase, `mcp[0].url`) and why; undefined when it holds. */
interface SchemaProblem {
  key: string;
  reason: string;
}

/** A whole configuration document (a `plugin` table, or the plugin itself) against the schema. */
export function documentProblem(document: unknown): SchemaProblem | undefined {
  const validate = compiled().document;
  if (validate(document)) return undefined;
  const inPluginTable =
    typeof document === 'object' && document !== null && isTable((document as Record<string, unknown>).plugin);
  return problemOf(firstError(validate), inPluginTable);
}

/** One plugin's settings (camelCase or snake_case) against `#/$defs/plugin`. */
export function pluginProblem(settings: unknown): SchemaProblem | undefined {
  const validate = compiled().plugin;
  if (validate(settings)) return undefined;
  return problemOf(firstError(validate), false);
}

function firstError(validate: ValidateFunction): ErrorObject {
  // `if` only says which branch failed; the error inside the branch names the key.
  const errors = (validate.errors ?? []).filter((error) => error.keyword !== 'if');
  return errors[0] ?? (validate.errors ?? [])[0]!;
}

const TYPE_REASONS: Readonly<Record<string, string>> = {
  string: 'must be a string',
  boolean: 'must be true or false',
  object: 'must be a table (an object)',
  array: 'must be a list',
};

function problemOf(error: ErrorObject, inPluginTable: boolean): SchemaProblem {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
  // The `plugin` table is the plugin; the keys are named as in a document that is the plugin.
  if (inPluginTable && path[0] === 'plugin') path.shift();
  const at = (segments: string[]): string => keyOf(segments);
  switch (error.keyword) {
    case 'required':
      return { key: at([...path, String(error.params.missingProperty)]), reason: 'is required' };
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const key = String(error.params.additionalProperty ?? error.params.unevaluatedProperty);
      const near = closestKey(key, knownKeys(error.parentSchema));
      return {
        key: at([...path, key]),
        reason: `is not ${settingOf(path)}${near === undefined ? '' : `; did you mean ${at([...path, near])}?`}`,
      };
    }
    case 'type': {
      const expected = String(error.params.type);
      const last = path.at(-1);
      // An item of the wrong type: the list is named, as a list of what it should hold.
      if (last !== undefined && /^\d+$/.test(last) && (expected === 'string' || expected === 'object'))
        return {
          key: at(path.slice(0, -1)),
          reason: expected === 'string' ? 'must be a list of strings' : 'must be a list of tables',
        };
      if (expected === 'array') {
        const items = (error.parentSchema as { items?: { type?: string } } | undefined)?.items;
        return {
          key: at(path),
          reason: items?.type === 'string' ? 'must be a list of strings' : 'must be a list of tables',
        };
      }
      return { key: at(path), reason: TYPE_REASONS[expected] ?? `must be of type ${expected}` };
    }
    case 'enum': {
      const allowed = (error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value));
      const reason =
        allowed.length === 2 ? `must be ${allowed[0]} or ${allowed[1]}` : `must be one of ${allowed.join(', ')}`;
      return { key: at(path), reason };
    }
    case 'minLength':
      return { key: at(path), reason: 'must not be empty' };
    case 'maxLength':
      return { key: at(path), reason: `is longer than ${String(error.params.limit)} characters` };
    default:
      return { key: at(path), reason: error.message ?? 'breaks the schema' };
  }
}

/** The keys a table of the schema names: its own properties, and those of what it refers to. */
function knownKeys(schema: unknown, depth = 0): string[] {
  if (typeof schema !== 'object' || schema === null || depth > 4) return [];
  const { properties, $ref, allOf } = schema as { properties?: object; $ref?: string; allOf?: unknown[] };
  const defs = (PLUGIN_CONFIG_SCHEMA as { $defs?: Record<string, unknown> }).$defs ?? {};
  const referred = $ref?.startsWith('#/$defs/') ? knownKeys(defs[$ref.slice('#/$defs/'.length)], depth + 1) : [];
  return [
    ...Object.keys(properties ?? {}),
    ...referred,
    ...(allOf ?? []).flatMap((part) => knownKeys(part, depth + 1)),
  ];
}

/**
 * The known key an unknown one is a typo of: at most two edits (insertions, deletions,
 * substitutions; a swap of neighbours is two), fewer than the key has characters; the
 * nearest, the first listed on a tie; undefined when none is that near.
 */
function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const edits = levenshtein().distance(key, name);
    if (edits <= Math.min(2, key.length - 1) && (best === undefined || edits < best.distance))
      best = { name, distance: edits };
  }
  return best?.name;
}

/** What an unknown key is not, by the table it is in. */
function settingOf(path: readonly string[]): string {
  const table = path.filter((segment) => !/^\d+$/.test(segment)).at(-1);
  if (table === 'mcp' || table === 'mcp_servers') return 'an MCP server setting';
  if (table === 'author') return 'an author setting';
  if (table === 'pi') return 'a pi setting';
  return 'a plugin setting';
}

/** `mcp_servers/0/env/KEY` → `mcp[0].env.KEY`, snake_case settings in camelCase. */
function keyOf(segments: readonly string[]): string {
  let key = '';
  for (const [index, segment] of segments.entries()) {
    if (/^\d+$/.test(segment)) key += `[${segment}]`;
    else {
      // Only a setting's own name is respelled, never a key inside env, headers or extensions.
      const parent = segments[index - 1];
      const own = parent === undefined || parent === 'pi';
      // A document's top-level servers are the plugin's `mcp`.
      const named =
        own && segment === 'mcp_servers' ? 'mcp' : own && Object.hasOwn(SNAKE, segment) ? SNAKE[segment]! : segment;
      key += key === '' ? named : `.${named}`;
    }
  }
  return key;
}

function isTable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
