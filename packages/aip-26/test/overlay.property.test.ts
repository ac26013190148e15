import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Overlay } from '../src/code/overlay.js';

describe('the merged bundle (overlay)', () => {
  it('refuses exactly the files that clash with a folder, in any order of any paths', () => {
    const segment = fc.constantFrom('a', 'b', 'c');
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));
    fc.assert(
      fc.property(fc.array(path, { maxLength: 25 }), fc.boolean(), (paths, sorted) => {
        // Sorted, most files share the folder of the one before, as in a listing.
        const input = sorted ? [...paths].sort() : paths;
        const overlay = new Overlay({ maxBytes: 1 << 30, maxFiles: 1000 });
        // The rule, with no shortcut: a file may not be where a folder is, nor below a file.
        const files = new Set<string>();
        const folders = new Set<string>();
        for (const p of input) {
          const parents = p
            .split('/')
            .slice(0, -1)
            .map((_, i, segments) => segments.slice(0, i + 1).join('/'));
          const clash = folders.has(p) || parents.some((parent) => files.has(parent));
          let refused: unknown;
          try {
            // Refusals are thrown, not returned; an overlay told of no additions returns no wait.
            void overlay.set(p, { data: Buffer.from(p), executable: false, source: 'test' }, 'test');
          } catch (error) {
            refused = error;
          }
          expect(refused === undefined ? 'taken' : (refused as { reason?: string }).reason).toBe(
            clash ? 'file-directory-clash' : 'taken',
          );
          if (!clash) {
            files.add(p);
            for (const parent of parents) folders.add(parent);
          }
        }
        expect([...overlay.files.keys()].sort()).toEqual([...files].sort());
      }),
      { numRuns: 3000 },
    );
  });
});
