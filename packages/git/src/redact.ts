import { inspect } from 'node:util';
import { GitError } from './errors.js';

const MARK = '[REDACTED]';

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MARK);
  return out;
}

/**
 * The last line of defence for credentials: our own messages never hold a header value,
 * but a server may echo one back (in a 401 body, say), and an engine or library may put
 * that text into its errors. Before an error leaves the public API, every string reachable
 * from it (message, stack, fields, the cause chain) is checked; a GitError is redacted in
 * place, and a foreign cause that holds a secret is replaced by a redacted copy, since its
 * data cannot be trusted to be fully reachable.
 */
export function scrubError<E>(error: E, secrets: readonly string[]): E {
  if (secrets.length === 0) return error;
  return scrub(error, secrets, 0) as E;
}

function scrub(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (depth > 8) return undefined;
  if (value instanceof GitError) {
    const record = value as unknown as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = scrubData(record[key], secrets);
    value.message = redact(value.message, secrets);
    if (value.stack !== undefined) value.stack = redact(value.stack, secrets);
    if (value.cause !== undefined) value.cause = scrub(value.cause, secrets, depth + 1);
    return value;
  }
  if (!holdsSecret(value, secrets, 0) && !inspectionHoldsSecret(value, secrets)) return value;
  if (value instanceof Error) {
    const copy = new Error(redact(value.message, secrets));
    copy.name = value.name;
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string') Object.assign(copy, { code });
    if (value.stack !== undefined) copy.stack = redact(value.stack, secrets);
    // The chain stays (each link checked the same way), so debugging keeps its story.
    if (value.cause !== undefined) copy.cause = scrub(value.cause, secrets, depth + 1);
    return copy;
  }
  return typeof value === 'string' ? redact(value, secrets) : MARK;
}

/**
 * What `util.inspect` prints of a value, the way a host logs an error: everything it can
 * reach, hidden and symbol-keyed properties, Map and Set entries, and what custom
 * inspectors show (a Headers object, a response), which no walk of own properties sees.
 * A value that cannot be printed counts as holding a secret: it is replaced, not kept.
 */
function inspectionHoldsSecret(value: unknown, secrets: readonly string[]): boolean {
  if (value === null || typeof value !== 'object') return false;
  let text: string;
  try {
    text = inspect(value, {
      depth: Infinity,
      showHidden: true,
      maxArrayLength: Infinity,
      maxStringLength: Infinity,
      breakLength: Infinity,
    });
  } catch {
    return true;
  }
  return secrets.some((secret) => text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)));
}

/** Fields of our own errors are plain data: strings, numbers, arrays of strings. */
function scrubData(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubData(item, secrets));
  return value;
}

function holdsSecret(value: unknown, secrets: readonly string[], depth: number): boolean {
  if (depth > 8 || value === null || value === undefined) return false;
  if (typeof value === 'string') return secrets.some((secret) => value.includes(secret));
  if (typeof value !== 'object') return false;
  if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return (
      holdsSecret(bytes.toString('latin1'), secrets, depth + 1) ||
      holdsSecret(bytes.toString('utf8'), secrets, depth + 1)
    );
  }
  const texts: unknown[] = [];
  if (value instanceof Error) texts.push(value.message, value.stack, value.cause);
  if (value instanceof Map) for (const [key, item] of value) texts.push(key, item);
  if (value instanceof Set) for (const item of value) texts.push(item);
  for (const key of Reflect.ownKeys(value)) {
    try {
      texts.push((value as Record<PropertyKey, unknown>)[key]);
    } catch {
      // A throwing getter holds nothing we can show either.
    }
  }
  return texts.some((text) => holdsSecret(text, secrets, depth + 1));
}
