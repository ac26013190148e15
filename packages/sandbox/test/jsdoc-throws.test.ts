import { join } from 'node:path';
import { packageDocs, throwsCodes } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';

// The entry points a host calls have JSDoc with an `@example` and the error codes they throw.
// A code named in an `@throws` must be one this package really declares, so a renamed code
// cannot linger in a doc.
const docs = packageDocs(join(import.meta.dirname, '..'));

describe('JSDoc of the entry points: an @example each, and @throws naming codes that exist', () => {
  it.each([
    ['checkSandbox', true],
    ['spawnIsolated', true],
    ['runIsolated', true],
    ['startEgressProxy', true],
  ] as const)('%s has an @example and says what it throws', (name, throws) => {
    const doc = docs.docOf(name);
    expect(doc, `no JSDoc found for ${name}`).toBeDefined();
    expect(doc).toMatch(/@example\s/);
    if (throws) expect(throwsCodes(doc!).length, `${name} names no code in an @throws`).toBeGreaterThan(0);
  });

  it('every code an @throws names is an error code of this package', () => {
    expect(docs.named.length).toBeGreaterThanOrEqual(8);
    expect(docs.named.filter(({ code }) => !docs.known.has(code))).toEqual([]);
    for (const code of [
      'SANDBOX_UNAVAILABLE',
      'SANDBOX_SPEC_INVALID',
      'SANDBOX_SETUP_FAILED',
      'SANDBOX_EGRESS_HOST_INVALID',
    ])
      expect(docs.known.has(code), code).toBe(true);
  });

  it('the check can fail: a made-up code is not among the known ones', () => {
    expect(docs.known.has('NOT_A_REAL_CODE')).toBe(false);
  });
});
