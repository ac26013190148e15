import {
  assertReturnsOrThrowsCoded,
  type EntryPointUnderTest,
  malformedVariant,
  wrongValue,
} from '@agentproto/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as git from '../../src/index.js';
import { assertRefName } from '../../src/ref-name.js';
import { maskUrl } from '../../src/url.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// [...] feeds [...] every public parse/validate entry point generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." Here: the pure checks a declaration's URL, ref and path go through
// before anything is fetched, and resolveRef over a remote's advertised refs.

/** FC_SEED=<n> replays a failing run; the seed is in every test's name and in fast-check's report. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const RUNS = 200;

const COMMIT = 'a'.repeat(40);
/** A remote's refs as listRefs returns them (already checked, so only the name asked for varies). */
const REFS: git.RemoteRefs = {
  url: 'https://example.com/skills.git',
  refs: [
    { name: 'HEAD', oid: COMMIT, symref: 'refs/heads/main' },
    { name: 'refs/heads/main', oid: COMMIT },
    { name: 'refs/tags/v1', oid: 'b'.repeat(40), peeled: COMMIT },
  ],
};
const text = (valid: string) =>
  fc.oneof(
    wrongValue,
    fc.string({ maxLength: 60 }),
    malformedVariant(valid),
    fc.constantFrom('', ' ', '\0', '..', '@{', 'refs/heads/', `${'a'.repeat(39)}`, 'A'.repeat(40)),
  );

// biome-ignore lint/suspicious/noExplicitAny: each entry point takes an input of its own type
type EntryPoint = EntryPointUnderTest<any>;

/**
 * Every public entry point that takes part of a declaration or a remote's answer, in one
 * place: a new one goes here (the test below fails until it does).
 */
const ENTRY_POINTS: Record<string, EntryPoint> = {
  normalizeRemoteUrl: {
    input: () => text('https://github.com/org/skills.git'),
    call: (value) => git.normalizeRemoteUrl(value),
  },
  maskUrl: { input: () => text('https://user:token@github.com/org/skills.git'), call: (value) => maskUrl(value) },
  remoteHelperOf: { input: () => text('ext::git-remote'), call: (value) => git.remoteHelperOf(value) },
  assertRefName: { input: () => text('refs/heads/main'), call: (value) => assertRefName(value) },
  refNameProblem: { input: () => text('v1.2.3'), call: (value) => git.refNameProblem(value) },
  isFullCommitId: { input: () => text(COMMIT), call: (value) => git.isFullCommitId(value) },
  normalizeDirectoryPath: { input: () => text('skills/review'), call: (value) => git.normalizeDirectoryPath(value) },
  resolveRef: {
    input: () => fc.oneof(text('main'), text('v1'), text(COMMIT)),
    call: (name) => git.resolveRef(REFS, name),
  },
};

/** Exports that match the pattern but take no document, and why. */
const NOT_DOCUMENT_INPUT: Record<string, string> = {};

const ENTRY_POINT_NAME =
  /^(parse|validate|read|import|define|resolve|verify|check|load|scan|desugar|plan|normalize|inherit|assert)/;

describe(`git entry points: malformed input ends in a result or a typed error (seed ${SEED})`, () => {
  it('the table names every exported parse/normalize/assert/resolve entry point', () => {
    const exported = Object.entries(git)
      .filter(([name, value]) => typeof value === 'function' && ENTRY_POINT_NAME.test(name))
      .map(([name]) => name);
    expect(exported.filter((name) => !(name in ENTRY_POINTS) && !(name in NOT_DOCUMENT_INPUT))).toEqual([]);
  });

  it('the fixtures are valid', () => {
    expect(git.resolveRef(REFS, 'v1')).toMatchObject({ commit: COMMIT });
    expect(git.normalizeRemoteUrl('https://github.com/org/skills.git')).toContain('github.com');
  });

  for (const [name, entry] of Object.entries(ENTRY_POINTS)) {
    it(`${name}: returns, or throws an error with a stable code`, async () => {
      await assertReturnsOrThrowsCoded(name, entry, { seed: SEED, numRuns: RUNS });
    }, 120_000);
  }
});

// Counterexamples the property found, kept as fixed cases.
describe('fixed cases the property found', () => {
  it('resolveRef of a list holding { toString: null } is GIT_INVALID_REF_NAME naming its type, not "Cannot convert object to primitive value" (seed 707)', () => {
    const hostile = [{ toString: null }] as never;
    expect(() => git.resolveRef(REFS, hostile)).toThrow(
      expect.objectContaining({ code: 'GIT_INVALID_REF_NAME', ref: '(array)' }),
    );
    expect(() => git.resolveRef(REFS, hostile)).toThrow(/\(array\)/);
  });

  it('maskUrl of a value that is not a string shows its type, not a TypeError', () => {
    expect(maskUrl([[]] as never)).toBe('(array)');
    expect(maskUrl(null as never)).toBe('(null)');
  });
});
