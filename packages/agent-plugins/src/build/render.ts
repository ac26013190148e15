/**
 * JSON as every file of a package is written: two-space indentation and a trailing
 * newline. Key order is the caller's (objects are built in their canonical order), so the
 * same input always gives the same bytes.
 */
export function renderJson(value: unknown): Uint8Array {
  return Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
}
