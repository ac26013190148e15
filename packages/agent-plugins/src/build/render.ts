/**
 * JSON as every file of a package is written: two-space indentation and a trailing
 * newline. Key order is the caller's (objects are built in their canonical order), so the
 * same input always gives the same bytes.
 */
export function renderJson(value: unknown): Uint8Array {
  return Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
}

/** `value` with the keys of every nested object in byte order: for data whose order is not ours to choose. */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortedKeys(item)]));
}
