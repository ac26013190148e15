import { byteOrder } from '../bundle/include.js';
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { isExtensionNamespace } from '../manifest.js';
import { EXTENSION_FINDING_CODES } from './codes.js';
import { knownNamespace } from './namespaces.js';
import { setOwn } from './paths.js';
import { isPlainObject, pointerToken } from '../values.js';

const at = (namespace: string, pointer = ''): string => `plugin.json#/extensions/${pointerToken(namespace)}${pointer}`;

/**
 * The pointer (below the namespace) of the first value in `value` that JSON cannot hold, or
 * undefined when all of it is JSON. Class instances (a TOML date) are refused too: JSON.stringify
 * would write them in a shape the author did not write.
 */
function nonJsonAt(value: unknown, pointer = ''): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : pointer;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const bad = nonJsonAt(item, `${pointer}/${index}`);
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const bad = nonJsonAt(item, `${pointer}/${pointerToken(key)}`);
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  return pointer;
}

/** A copy of `value` with object keys in byte order at every depth; arrays keep their order. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(byteOrder)) setOwn(out, key, sortKeysDeep(value[key]));
  return out;
}

/**
 * The `extensions` object of plugin.json (§5.6, §8.1) from the caller's data by namespace:
 * namespaces in byte order, com.openai with its keys sorted at every depth (the seed: "keys
 * are written sorted"), every other namespace's value carried as it is (same object, same key
 * order). Undefined when nothing remains, so the caller leaves the field out.
 *
 * | Input                                          | Outcome                      | Code |
 * |------------------------------------------------|------------------------------|------|
 * | key not a reverse-domain namespace             | namespace left out, error    | extension.namespace-invalid |
 * | value not an object                            | namespace left out           | extension.data-not-object |
 * | value holds a non-JSON value (date, NaN, …)    | namespace left out           | extension.data-not-json |
 * | com.openai `interface` not an object           | `interface` left out         | extension.interface-not-object |
 *
 * JSON.stringify writes integer-like keys ("10") before the others whatever the object's
 * order; no namespace can be one (it starts with a letter), but keys inside the data can.
 */
export function extensionData(extensions: Readonly<Record<string, unknown>>): {
  extensions: Record<string, Record<string, unknown>> | undefined;
  findings: Finding[];
} {
  const findings: Finding[] = [];
  const kept: [string, Record<string, unknown>][] = [];
  for (const [namespace, value] of Object.entries(extensions)) {
    if (!isExtensionNamespace(namespace)) {
      findings.push(
        findingFrom(
          EXTENSION_FINDING_CODES,
          'extension.namespace-invalid',
          at(namespace),
          'is not a reverse-domain namespace; it was not packaged',
        ),
      );
      continue;
    }
    if (!isPlainObject(value)) {
      findings.push(
        findingFrom(
          EXTENSION_FINDING_CODES,
          'extension.data-not-object',
          at(namespace),
          'is not an object; it was not packaged',
        ),
      );
      continue;
    }
    const bad = nonJsonAt(value);
    if (bad !== undefined) {
      findings.push(
        findingFrom(
          EXTENSION_FINDING_CODES,
          'extension.data-not-json',
          at(namespace, bad),
          'is not a JSON value; the namespace was not packaged',
        ),
      );
      continue;
    }
    let data = value;
    if (knownNamespace(namespace)?.sortedData === true) {
      data = sortKeysDeep(value) as Record<string, unknown>;
      if (Object.hasOwn(data, 'interface') && !isPlainObject(data.interface)) {
        findings.push(
          findingFrom(
            EXTENSION_FINDING_CODES,
            'extension.interface-not-object',
            at(namespace, '/interface'),
            'is not an object; it was not packaged',
          ),
        );
        delete data.interface;
      }
    }
    kept.push([namespace, data]);
  }
  kept.sort(([a], [b]) => byteOrder(a, b));
  if (kept.length === 0) return { extensions: undefined, findings: sortFindings(findings) };
  const out: Record<string, Record<string, unknown>> = {};
  for (const [namespace, data] of kept) setOwn(out, namespace, data);
  return { extensions: out, findings: sortFindings(findings) };
}
