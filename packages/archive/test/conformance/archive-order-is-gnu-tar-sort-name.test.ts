import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortInArchiveOrder } from '../../src/index.js';

/**
 * One archive order for the whole SDK: GNU tar `--sort=name`, which every archive writer
 * (the store's and the plugins' layers, AIP-26 bundles) takes from `sortInArchiveOrder`.
 * The writers' own conformance tests compare their listings with GNU tar's.
 */

describe('sortInArchiveOrder, the one order', () => {
  it('puts a folder and its subtree before the names that extend its name with a byte below "/", in unsigned UTF-8 byte order otherwise', () => {
    const names = [
      'x.txt',
      'x-y.txt',
      'x/',
      'x/a',
      'x/sub/',
      'x/sub/b',
      'x/a-b',
      'X',
      'é',
      '\uFF61',
      '\u{1F600}',
      'x0',
      'x\u007f',
    ];
    expect(sortInArchiveOrder([...names].reverse(), (n) => n)).toEqual([
      'X',
      'x/',
      'x/a',
      'x/a-b',
      'x/sub/',
      'x/sub/b',
      'x-y.txt',
      'x.txt',
      'x0',
      'x\u007f',
      'é',
      '\uFF61',
      '\u{1F600}',
    ]);
  });

  it('gives one order whatever the input order, and leaves its input alone', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: fc.constantFrom('a', 'B', '/', '-', '.', 'é', '\u{1F600}'), maxLength: 6 })),
        fc.integer(),
        (names, seed) => {
          const shuffled = [...names].sort((a, b) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7));
          const before = [...shuffled];
          expect(sortInArchiveOrder(shuffled, (n) => n)).toEqual(sortInArchiveOrder(names, (n) => n));
          expect(shuffled).toEqual(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});
