import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidKeyError, openContentStore } from '@agentproto/content-cache';
import { canonicalJson, canonicalKey, objectIdOf } from '../src/canonical-key.js';
import { storeState } from './support/inspect.js';
import { tempDir } from './support/temp.js';

const base = { provider: 'git', declaration: { source: 'x' }, version: 'v', contentId: 'c' };
const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

describe('canonical keys', () => {
  const bad: [string, unknown, string][] = [
    ['a function in the declaration', { ...base, declaration: { f: () => 1 } }, '/declaration/f'],
    ['undefined in the declaration', { ...base, declaration: { u: undefined } }, '/declaration/u'],
    ['NaN', { ...base, declaration: { n: Number.NaN } }, '/declaration/n'],
    ['Infinity', { ...base, declaration: [Number.POSITIVE_INFINITY] }, '/declaration/0'],
    ['a bigint', { ...base, declaration: { b: 1n } }, '/declaration/b'],
    ['a symbol', { ...base, declaration: { s: Symbol('s') } }, '/declaration/s'],
    ['a Date', { ...base, declaration: { d: new Date(0) } }, '/declaration/d'],
    ['a Buffer', { ...base, declaration: Buffer.from('x') }, '/declaration'],
    ['a Map', { ...base, declaration: new Map() }, '/declaration'],
    ['a cycle', { ...base, declaration: cyclic }, '/declaration/self'],
    // biome-ignore lint/suspicious/noSparseArray: a hole is the hostile input under test
    ['a sparse array', { ...base, declaration: [1, , 3] }, '/declaration/1'],
    ['NUL in a declaration string', { ...base, declaration: { source: 'a\0b' } }, '/declaration/source'],
    ['NUL in a declaration name', { ...base, declaration: { 'a\0b': 1 } }, '/declaration'],
    ['NUL in the provider', { ...base, provider: 'g\0it' }, '/provider'],
    ['NUL in the version', { ...base, version: 'v\0' }, '/version'],
    ['NUL in the content id', { ...base, contentId: '\0' }, '/contentId'],
    ['an empty provider', { ...base, provider: '' }, '/provider'],
    ['a numeric version', { ...base, version: 1 }, '/version'],
    ['a missing content id', { provider: 'git', declaration: null, version: 'v' }, '/contentId'],
    ['a missing declaration', { provider: 'git', version: 'v', contentId: 'c' }, '/declaration'],
    ['a key that is not an object', 'git:x', ''],
  ];
  it.each(bad)('refuses %s, naming where', (_name, key, pointer) => {
    const error = (() => {
      try {
        canonicalKey(key as never);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidKeyError);
    expect((error as InvalidKeyError).code).toBe('CACHE_INVALID_KEY');
    expect((error as InvalidKeyError).pointer).toBe(pointer);
  });

  it('rejects an invalid key in acquire before touching the store', async () => {
    const store = await openContentStore({ root: await tempDir() });
    await expect(
      store.acquire({ ...base, declaration: { f: () => 1 } } as never, async () => {}),
    ).rejects.toBeInstanceOf(InvalidKeyError);
    expect(storeState(store.root)).toEqual({ objects: [], keys: [], links: [], staging: [] });
  });

  const json = fc.jsonValue({ noUnicodeString: false }).filter((v) => !JSON.stringify(v).includes('\\u0000'));

  it('is the same text for any order of object keys', () => {
    fc.assert(
      fc.property(json, (value) => {
        const shuffled = JSON.parse(JSON.stringify(value), (_k, v: unknown) =>
          v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
        );
        expect(canonicalJson(shuffled)).toBe(canonicalJson(value));
      }),
    );
  });

  it('parses back to an equal value', () => {
    fc.assert(
      fc.property(json, (value) => {
        // JSON has no -0; canonical text writes it as 0, like JSON.stringify.
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('gives different declarations different keys', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b) && canonicalJson(a) !== canonicalJson(b));
        expect(canonicalKey({ ...base, declaration: a as never })).not.toBe(
          canonicalKey({ ...base, declaration: b as never }),
        );
      }),
    );
  });

  it('addresses objects by provider and content id only', () => {
    expect(objectIdOf({ provider: 'git', contentId: 'c' })).toBe(objectIdOf({ provider: 'git', contentId: 'c' }));
    expect(objectIdOf({ provider: 'git', contentId: 'c' })).not.toBe(objectIdOf({ provider: 'other', contentId: 'c' }));
    expect(objectIdOf({ provider: 'git', contentId: 'c' })).toMatch(/^[0-9a-f]{64}$/);
  });
});
