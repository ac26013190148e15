import { assertReturnsOrThrowsCoded, type EntryPointUnderTest, malformedVariant } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import * as cache from '../../src/index.js';
import { canonicalJson, canonicalKey } from '../../src/canonical-key.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// [...] feeds [...] every public parse/validate entry point generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." Here: cache keys (whose declaration comes from a document).

/** FC_SEED=<n> replays a failing run; the seed is in every test's name and in fast-check's report. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const RUNS = 100;

const KEY = {
  provider: 'git',
  declaration: { source: 'https://example.com/skills.git', path: 'skills/review', config: { a: [1, 'x'] } },
  version: 'v1',
  contentId: 'sha256:abc',
};

// biome-ignore lint/suspicious/noExplicitAny: each entry point takes an input of its own type
type EntryPoint = EntryPointUnderTest<any>;

/**
 * Every public entry point that takes a document or other untrusted input, in one place: a
 * new one goes here (the test below fails until it does).
 */
const ENTRY_POINTS: Record<string, EntryPoint> = {
  // Not exported: every key a host passes to acquire, lookup or linkPathOf goes through canonicalKey.
  canonicalKey: { input: () => malformedVariant(KEY), call: (key) => canonicalKey(key) },
  canonicalJson: { input: () => malformedVariant(KEY.declaration), call: (value) => canonicalJson(value) },
};

/** Exports that match the pattern but take no document, and why. */
const NOT_DOCUMENT_INPUT: Record<string, string> = {};

const ENTRY_POINT_NAME =
  /^(parse|validate|read|import|define|resolve|verify|check|load|scan|desugar|plan|normalize|inherit|assert)/;

describe(`content-cache entry points: malformed input ends in a result or a typed error (seed ${SEED})`, () => {
  it('the table names every exported parse/check/read entry point', () => {
    const exported = Object.entries(cache)
      .filter(([name, value]) => typeof value === 'function' && ENTRY_POINT_NAME.test(name))
      .map(([name]) => name);
    expect(exported.filter((name) => !(name in ENTRY_POINTS) && !(name in NOT_DOCUMENT_INPUT))).toEqual([]);
  });

  it('the fixtures are valid', () => {
    expect(canonicalKey(KEY)).toMatch(/^[0-9a-f]{64}$|./);
  });

  for (const [name, entry] of Object.entries(ENTRY_POINTS)) {
    it(`${name}: returns, or throws an error with a stable code`, async () => {
      await assertReturnsOrThrowsCoded(name, entry, { seed: SEED, numRuns: RUNS });
    }, 120_000);
  }
});
