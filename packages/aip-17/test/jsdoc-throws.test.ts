import { join } from 'node:path';
import { packageDocs, throwsCodes } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';

// The entry points a host calls have JSDoc with an `@example` and the error codes they throw.
// A code named in an `@throws` must be one this package (or a workspace package it depends on)
// really declares, so a renamed code cannot linger in a doc.
const docs = packageDocs(join(import.meta.dirname, '..'));

describe('JSDoc of the entry points: an @example each, and @throws naming codes that exist', () => {
  it.each([
    ['defineRunner', true],
    ['validateRunner', true],
    ['loadRunnerBlock', true],
    ['migrateLegacyRuntime', true],
    ['createRunner', true],
    ['bubblewrapDriver', true],
  ] as const)('%s has an @example and says what it throws', (name, throws) => {
    const doc = docs.docOf(name);
    expect(doc, `no JSDoc found for ${name}`).toBeDefined();
    expect(doc).toMatch(/@example\s/);
    if (throws) expect(throwsCodes(doc!).length, `${name} names no code in an @throws`).toBeGreaterThan(0);
  });

  it('every code an @throws names is an error code of this package or of a workspace package it depends on', () => {
    expect(docs.named.length).toBeGreaterThanOrEqual(12);
    expect(docs.named.filter(({ code }) => !docs.known.has(code))).toEqual([]);
  });

  it('the codes of this package are all among the known ones', () => {
    for (const code of [
      'AIP17_RUNNER_INVALID',
      'AIP17_RUNNER_UNRESOLVED',
      'AIP17_IMAGE_UNKNOWN',
      'AIP17_IMAGE_UNRESOLVED',
      'AIP17_HOST_INVALID',
      'AIP17_ENGINE_UNSUPPORTED',
      'AIP17_NEEDS_UNSUPPORTED',
      'AIP17_NEEDS_MISSING',
    ])
      expect(docs.known.has(code), code).toBe(true);
  });

  it('the check can fail: a made-up code is not among the known ones', () => {
    expect(docs.known.has('NOT_A_REAL_CODE')).toBe(false);
    expect(
      throwsCodes('\n * Text `NOT_CODE_A`.\n * @throws {X} `NOT_A_REAL_CODE`: never.\n * @example `NOT_CODE_B`'),
    ).toEqual(['NOT_A_REAL_CODE']);
  });
});
