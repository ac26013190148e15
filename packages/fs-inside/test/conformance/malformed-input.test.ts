import type { EntryPointUnderTest } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import * as inside from '../../src/index.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// [...] feeds [...] every public parse/validate entry point generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." Here: nothing takes a document; the table proves that stays so.

// biome-ignore lint/suspicious/noExplicitAny: each entry point takes an input of its own type
type EntryPoint = EntryPointUnderTest<any>;

/**
 * Every public entry point that takes a document or other untrusted input, in one place: a
 * new one goes here (the test below fails until it does).
 */
const ENTRY_POINTS: Record<string, EntryPoint> = {};

/** Exports that match the pattern but take no document, and why. */
const NOT_DOCUMENT_INPUT: Record<string, string> = {
  readDescriptorInto: "takes an open descriptor and a buffer of the host's",
  readFileInside: "takes a root and a path of the host's; the path rules have their own security tests",
};

const ENTRY_POINT_NAME =
  /^(parse|validate|read|import|define|resolve|verify|check|load|scan|desugar|plan|normalize|inherit|assert)/;

describe(`fs-inside entry points: malformed input ends in a result or a typed error`, () => {
  it('the table names every exported parse/check/read entry point', () => {
    const exported = Object.entries(inside)
      .filter(([name, value]) => typeof value === 'function' && ENTRY_POINT_NAME.test(name))
      .map(([name]) => name);
    expect(exported.filter((name) => !(name in ENTRY_POINTS) && !(name in NOT_DOCUMENT_INPUT))).toEqual([]);
  });
});
