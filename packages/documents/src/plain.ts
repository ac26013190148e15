import { type DocumentFormat, DocumentTooComplexError, DocumentTooDeepError } from './errors.js';
import type { DocumentLimits } from './limits.js';

/**
 * A parsed value as plain data, checked against the depth and node limits: Maps become
 * plain objects (keys as strings), arrays stay arrays, anything else is a leaf. Keys are
 * defined with defineProperty, so a `__proto__` key stays data and never becomes the
 * object's prototype. Iterative, not recursive: a value shared by aliases (or a cycle an
 * alias made) is copied at each use and counted each time, so expansion stops at
 * `maxNodes` instead of exhausting memory, and no depth reaches the stack.
 */
export function toCheckedPlain(
  value: unknown,
  source: string,
  format: DocumentFormat,
  limits: Pick<DocumentLimits, 'maxDepth' | 'maxNodes'>,
): unknown {
  let nodes = 0;
  const root: { value?: unknown } = {};
  const stack: { from: unknown; into: Record<string, unknown> | unknown[]; key: string | number; depth: number }[] = [
    { from: value, into: root as Record<string, unknown>, key: 'value', depth: 0 },
  ];
  while (stack.length > 0) {
    const { from, into, key, depth } = stack.pop()!;
    nodes += 1;
    if (nodes > limits.maxNodes) throw new DocumentTooComplexError(source, format, 'nodes', limits.maxNodes);
    let copy: unknown = from;
    if (from instanceof Map || Array.isArray(from) || isPlainRecord(from)) {
      if (depth + 1 > limits.maxDepth)
        throw new DocumentTooDeepError(source, format, limits.maxDepth, undefined, undefined);
      if (Array.isArray(from)) {
        const list: unknown[] = new Array<unknown>(from.length);
        from.forEach((item, index) => {
          stack.push({ from: item, into: list, key: index, depth: depth + 1 });
        });
        copy = list;
      } else {
        const record: Record<string, unknown> = {};
        const entries: Iterable<[unknown, unknown]> = from instanceof Map ? from : Object.entries(from);
        for (const [k, v] of entries) {
          const name = String(k);
          Object.defineProperty(record, name, {
            value: undefined,
            enumerable: true,
            writable: true,
            configurable: true,
          });
          stack.push({ from: v, into: record, key: name, depth: depth + 1 });
        }
        copy = record;
      }
    }
    if (Array.isArray(into)) into[key as number] = copy;
    else Object.defineProperty(into, key, { value: copy, enumerable: true, writable: true, configurable: true });
  }
  return root.value;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
