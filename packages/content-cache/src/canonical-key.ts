import { createHash } from 'node:crypto';
import { InvalidKeyError } from './errors.js';

/** Plain JSON: what a key and a declaration may hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * What content is stored under. The provider and the canonical declaration say what was
 * asked for; `version` is what it resolved to; `contentId` names the content itself.
 */
export interface CacheKey {
  provider: string;
  declaration: JsonValue;
  version: string;
  contentId: string;
  /**
   * Where the content id is unique and was proven obtainable: for git, the repository.
   * Part of the object's identity, so a declaration reuses only objects its own source
   * produced (see objectIdOf). Optional: keys without it are unscoped.
   */
  scope?: string;
}

/**
 * Stable JSON: object keys sorted by code unit, no whitespace, no NUL in any string. Anything that is not plain
 * JSON (undefined, functions, symbols, bigints, non-finite numbers, class instances such as
 * Date or Buffer, cycles) is refused rather than silently dropped or coerced, because two
 * different declarations must never canonicalise to the same key.
 */
export function canonicalJson(value: unknown): string {
  return encode(value, '', new Set());
}

function encode(value: unknown, pointer: string, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidKeyError(pointer, `${value} is not a JSON number`);
      return JSON.stringify(value);
    case 'string':
      if (value.includes('\0')) throw new InvalidKeyError(pointer, 'strings must not contain NUL');
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new InvalidKeyError(pointer, `a ${typeof value} is not JSON`);
  }
  const object = value as object;
  if (seen.has(object)) throw new InvalidKeyError(pointer, 'the value refers to itself');
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      const items: string[] = [];
      for (let i = 0; i < object.length; i++) {
        if (!(i in object)) throw new InvalidKeyError(`${pointer}/${i}`, 'sparse arrays are not JSON');
        items.push(encode(object[i], `${pointer}/${i}`, seen));
      }
      return `[${items.join(',')}]`;
    }
    const proto = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      throw new InvalidKeyError(pointer, `a ${proto?.constructor?.name ?? 'non-plain'} object is not plain JSON`);
    }
    const record = object as Record<string, unknown>;
    const names = Object.keys(record).sort();
    const fields = names.map((name) => {
      if (name.includes('\0')) throw new InvalidKeyError(pointer, 'names must not contain NUL');
      const child = `${pointer}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      return `${JSON.stringify(name)}:${encode(record[name], child, seen)}`;
    });
    return `{${fields.join(',')}}`;
  } finally {
    seen.delete(object);
  }
}

function requireName(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidKeyError(`/${field}`, 'must be a string');
  if (value.length === 0) throw new InvalidKeyError(`/${field}`, 'must not be empty');
  if (value.includes('\0')) throw new InvalidKeyError(`/${field}`, 'must not contain NUL');
  return value;
}

/** Checks a key's shape and returns its canonical JSON text. */
export function canonicalKey(key: CacheKey): string {
  if (key === null || typeof key !== 'object') throw new InvalidKeyError('', 'a key must be an object');
  const provider = requireName(key.provider, 'provider');
  const version = requireName(key.version, 'version');
  const contentId = requireName(key.contentId, 'contentId');
  const scope = key.scope === undefined ? undefined : requireName(key.scope, 'scope');
  if (!('declaration' in key)) throw new InvalidKeyError('/declaration', 'is required');
  const declaration = encode(key.declaration, '/declaration', new Set());
  // Fields in sorted order, so the record's key re-canonicalises to the same text.
  const scoped = scope === undefined ? '' : `,"scope":${JSON.stringify(scope)}`;
  return `{"contentId":${JSON.stringify(contentId)},"declaration":${declaration},"provider":${JSON.stringify(provider)}${scoped},"version":${JSON.stringify(version)}}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The digest a key record is filed under. */
export function keyDigest(key: CacheKey): string {
  return sha256Hex(canonicalKey(key));
}

/**
 * An object is addressed by its content identity, not by the key: two declarations that
 * resolve to the same content share one tree. The provider is part of the identity because
 * a content id is only unique within its supplier's scope; the key's `scope` (for git, the
 * repository) is too, because knowing a content id is no proof of being able to obtain it:
 * a repository of one's own can name the tree id of someone else's private directory
 * without holding its files, and must not be handed that directory from a shared store.
 */
export function objectIdOf(key: Pick<CacheKey, 'provider' | 'contentId' | 'scope'>): string {
  const scoped = key.scope === undefined ? '' : `,"scope":${JSON.stringify(key.scope)}`;
  return sha256Hex(
    `{"provider":${JSON.stringify(key.provider)},"contentId":${JSON.stringify(key.contentId)}${scoped}}`,
  );
}

/** A declaration link is one per (provider, declaration): it points at the tree in use now. */
export function declarationDigest(key: Pick<CacheKey, 'provider' | 'declaration'>): string {
  return sha256Hex(`{"provider":${JSON.stringify(key.provider)},"declaration":${canonicalJson(key.declaration)}}`);
}
