import { assertReturnsOrThrowsCoded, type EntryPointUnderTest, malformedDocumentBytes } from '@agentproto/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as documents from '../../src/index.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// [...] feeds [...] every public parse/validate entry point generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." Here: the untrusted-document parsers every package reads through.

/** FC_SEED=<n> replays a failing run; the seed is in every test's name and in fast-check's report. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const RUNS = 100;

const DOCUMENT = {
  name: 'acme.tools',
  version: '1.0.0',
  keywords: ['a', 'b'],
  author: { name: 'Acme', email: 'a@example.com' },
  nested: { list: [1, 2.5, true, null] },
};

// biome-ignore lint/suspicious/noExplicitAny: each entry point takes an input of its own type
type EntryPoint = EntryPointUnderTest<any>;

/**
 * Every public entry point that takes a document or other untrusted input, in one place: a
 * new one goes here (the test below fails until it does).
 */
const ENTRY_POINTS: Record<string, EntryPoint> = {
  parseUntrustedJson: {
    input: () => malformedDocumentBytes(DOCUMENT),
    call: (bytes) => documents.parseUntrustedJson(bytes, { source: 'x.json' }),
  },
  parseUntrustedYaml: {
    input: () => malformedDocumentBytes(DOCUMENT),
    call: (bytes) => documents.parseUntrustedYaml(bytes, { source: 'x.yaml' }),
  },
  parseYamlDocument: {
    input: () => malformedDocumentBytes(DOCUMENT),
    call: (bytes) => documents.parseYamlDocument(bytes, { source: 'x.yaml' }),
  },
  // JSON text is not TOML: most runs end in DOCUMENT_SYNTAX, the rest parse an odd table.
  parseUntrustedToml: {
    input: () => malformedDocumentBytes(DOCUMENT),
    call: (bytes) => documents.parseUntrustedToml(bytes, { source: 'x.toml' }),
  },
  // Takes the text a reader decoded: malformed front matter, closed or not, behind a BOM or not.
  findFrontmatter: {
    input: () =>
      fc
        .tuple(
          malformedDocumentBytes(DOCUMENT),
          fc.constantFrom('---\n', '\uFEFF---\n', '---\r\n', ''),
          fc.constantFrom('\n---\nbody\n', '\n', ''),
        )
        .map(([bytes, open, close]) => `${open}${Buffer.from(bytes).toString('utf8')}${close}`),
    call: (value) => documents.findFrontmatter(value, 32 * 1024),
  },
};

/** Exports that match the pattern but take no document, and why. */
const NOT_DOCUMENT_INPUT: Record<string, string> = {
  readBoundedFile: "takes a path and a limit of the host's; the bytes it reads go to the parsers above",
};

const ENTRY_POINT_NAME =
  /^(parse|validate|read|import|define|resolve|verify|check|load|scan|desugar|plan|normalize|inherit|assert)/;

describe(`documents entry points: malformed input ends in a result or a typed error (seed ${SEED})`, () => {
  it('the table names every exported parse/check/read entry point', () => {
    const exported = Object.entries(documents)
      .filter(([name, value]) => typeof value === 'function' && ENTRY_POINT_NAME.test(name))
      .map(([name]) => name);
    expect(exported.filter((name) => !(name in ENTRY_POINTS) && !(name in NOT_DOCUMENT_INPUT))).toEqual([]);
  });

  it('the fixtures are valid', () => {
    expect(documents.parseUntrustedJson(JSON.stringify(DOCUMENT), { source: 'x.json' })).toEqual(DOCUMENT);
  });

  for (const [name, entry] of Object.entries(ENTRY_POINTS)) {
    it(`${name}: returns, or throws an error with a stable code`, async () => {
      await assertReturnsOrThrowsCoded(name, entry, { seed: SEED, numRuns: RUNS });
    }, 120_000);
  }
});
