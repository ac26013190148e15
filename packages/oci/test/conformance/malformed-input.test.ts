import {
  assertReturnsOrThrowsCoded,
  type EntryPointUnderTest,
  malformedVariant,
  wrongValue,
} from '@agentproto/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as oci from '../../src/index.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// [...] feeds [...] every public parse/validate entry point generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." Here: registry references and challenges.

/** FC_SEED=<n> replays a failing run; the seed is in every test's name and in fast-check's report. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const RUNS = 100;

const text = () => fc.oneof(wrongValue, fc.string({ maxLength: 60 }));

// biome-ignore lint/suspicious/noExplicitAny: each entry point takes an input of its own type
type EntryPoint = EntryPointUnderTest<any>;

/**
 * Every public entry point that takes a document or other untrusted input, in one place: a
 * new one goes here (the test below fails until it does).
 */
const ENTRY_POINTS: Record<string, EntryPoint> = {
  parseReference: {
    input: () => fc.oneof(text(), malformedVariant('registry.example.com:5000/team/cache:v1')),
    call: (value) => oci.parseReference(value),
  },
  checkReference: {
    input: () => fc.oneof(text(), malformedVariant('v1.2.3')),
    call: (value) => oci.checkReference(value),
  },
  checkRepository: {
    input: () => fc.oneof(text(), malformedVariant('team/cache')),
    call: (value) => oci.checkRepository(value),
  },
  parseChallenge: {
    input: () =>
      fc.oneof(
        text(),
        malformedVariant(
          'Bearer realm="https://auth.example.com/token",service="registry",scope="repository:team/cache:pull"',
        ),
      ),
    call: (value) => oci.parseChallenge(value),
  },
};

/** Exports that match the pattern but take no document, and why. */
const NOT_DOCUMENT_INPUT: Record<string, string> = {
  readLayerBlob: 'takes a registry client and a descriptor; the blob goes through readArchive (@agentproto/archive)',
};

const ENTRY_POINT_NAME =
  /^(parse|validate|read|import|define|resolve|verify|check|load|scan|desugar|plan|normalize|inherit|assert)/;

describe(`oci entry points: malformed input ends in a result or a typed error (seed ${SEED})`, () => {
  it('the table names every exported parse/check/read entry point', () => {
    const exported = Object.entries(oci)
      .filter(([name, value]) => typeof value === 'function' && ENTRY_POINT_NAME.test(name))
      .map(([name]) => name);
    expect(exported.filter((name) => !(name in ENTRY_POINTS) && !(name in NOT_DOCUMENT_INPUT))).toEqual([]);
  });

  for (const [name, entry] of Object.entries(ENTRY_POINTS)) {
    it(`${name}: returns, or throws an error with a stable code`, async () => {
      await assertReturnsOrThrowsCoded(name, entry, { seed: SEED, numRuns: RUNS });
    }, 120_000);
  }
});
