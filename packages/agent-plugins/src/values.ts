/**
 * Small tests and names for untrusted values (parsed JSON and YAML, a host's configuration),
 * and JSON pointer tokens for the keys that findings point at. Internal: not exported from the
 * package index.
 */

/**
 * True for any object that is not an array, whatever its prototype (a Date or a class instance
 * passes). Enough for parsed JSON and YAML, which only hold plain objects.
 */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * True only for an object whose prototype is Object.prototype or null: a host value that is a
 * class instance, a Map or a Date is not taken for data that is written out as JSON.
 */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(value));

// Named without quoting the value: a misplaced token must not end up in a log.
/** What a JSON value is, in JSON's words ("an array", "an object", "a number", "null"). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : type === 'undefined' ? 'undefined' : `a ${type}`;
}

// Named without quoting the value: a misplaced token must not end up in a log.
/** What a YAML value is, in YAML's words ("a list", "a map", "a number", "null"). */
export function yamlKindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

/** A JSON pointer token for `key` (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function pointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
