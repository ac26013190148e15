import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  PathError,
  findPathTwins,
  normalizeBundlePath,
  normalizeRemotePath,
  normalizeWorkspacePath,
  pathKey,
} from '../src/paths/index.js';

// Path-shaped strings rich in the pieces that matter: dots, slashes, backslashes, drive
// letters, percent escapes, controls, combining marks, case, long names.
const piece = fc.oneof(
  fc.constantFrom(
    '',
    '.',
    '..',
    '...',
    'a',
    'B',
    'tool.ts',
    'C:',
    'c:',
    '%2e',
    '%2F',
    '%5c',
    '%41',
    '~',
    ' ',
    '\u00e9',
    'e\u0301',
    '\u0130',
    '\u212a',
  ),
  fc.constantFrom('\0', '\n', '\t', '\u007f', '\u0085', '\u202e', '\ud800', '\udfff'),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constant('x'.repeat(256)),
);
const separator = fc.constantFrom('/', '/', '/', '//', '\\', '/./');
const pathish = fc
  .tuple(fc.array(fc.tuple(piece, separator), { maxLength: 12 }), piece)
  .map(([pairs, last]) => pairs.map(([p, s]) => p + s).join('') + last);
const anyString = fc.oneof(pathish, fc.string({ unit: 'binary', maxLength: 64 }), fc.string({ maxLength: 64 }));

const normalisers = [normalizeBundlePath, normalizeWorkspacePath, normalizeRemotePath] as const;

/** The normalised path, or undefined when refused with a PathError (anything else fails the test). */
function attempt(normalise: (p: string) => { path: string }, input: string): string | undefined {
  try {
    return normalise(input).path;
  } catch (error) {
    if (error instanceof PathError) return undefined;
    throw error;
  }
}

describe('path normalisation, for all inputs', () => {
  it('either returns a path or throws a PathError, never anything else', () => {
    fc.assert(
      fc.property(anyString, fc.constantFrom(...normalisers), (input, normalise) => {
        attempt(normalise, input);
      }),
      { numRuns: 5000 },
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(anyString, (input) => {
        const once = attempt(normalizeBundlePath, input);
        if (once === undefined) return;
        expect(normalizeBundlePath(once).path).toBe(once);
        expect(pathKey(once)).toBe(once);
      }),
      { numRuns: 5000 },
    );
  });

  it('never yields "..", ".", "//", "\\", NUL, a control character, or a leading or trailing "/"', () => {
    fc.assert(
      fc.property(anyString, fc.constantFrom(...normalisers), (input, normalise) => {
        const out = attempt((p) => normalise(p, { allowRoot: true }), input);
        if (out === undefined) return;
        const segments = out === '' ? [] : out.split('/');
        expect(segments).not.toContain('..');
        expect(segments).not.toContain('.');
        expect(segments).not.toContain('');
        expect(out).not.toMatch(/\\|\0|[\u0000-\u001f\u007f]|^\/|\/$/);
        expect(out).toBe(out.normalize('NFC'));
      }),
      { numRuns: 5000 },
    );
  });

  it('stays under the root when joined to it', () => {
    const root = '/srv/bundle';
    fc.assert(
      fc.property(anyString, (input) => {
        const out = attempt(normalizeBundlePath, input);
        if (out === undefined) return;
        expect(posix.resolve(root, out).startsWith(`${root}/`)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('gives NFC and NFD spellings of a path one key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }), (name) => {
        const nfc = attempt(normalizeBundlePath, name.normalize('NFC'));
        const nfd = attempt(normalizeBundlePath, name.normalize('NFD'));
        expect(nfd).toBe(nfc);
      }),
      { numRuns: 2000 },
    );
  });

  it('finds the twins a walk from the root finds for every path, in any order of any paths', () => {
    // The same rules with one map per folded prefix and no shortcut: each path is walked in
    // full, its first spelling kept per prefix, its first clash reported.
    const byFullWalk = (paths: string[]) => {
      const twins: { kind: string; first: string; second: string }[] = [];
      const spellings = new Map<string, string>();
      const fold = (segment: string) =>
        [...segment]
          .map((ch) => ch.toLowerCase())
          .join('')
          .normalize('NFC');
      for (const path of paths) {
        const segments = pathKey(path).split('/');
        for (let depth = 0; depth < segments.length; depth++) {
          const folded = segments
            .slice(0, depth + 1)
            .map(fold)
            .join('\0');
          const first = spellings.get(folded);
          if (first === undefined) spellings.set(folded, segments[depth]!);
          else if (first !== segments[depth]) {
            const firstPrefix = segments.slice(0, depth).map((_, d) =>
              spellings.get(
                segments
                  .slice(0, d + 1)
                  .map(fold)
                  .join('\0'),
              ),
            );
            const twin = {
              kind: 'case',
              first: [...firstPrefix, first].join('/'),
              second: segments.slice(0, depth + 1).join('/'),
            };
            if (!twins.some((t) => t.first === twin.first && t.second === twin.second)) twins.push(twin);
            break;
          }
        }
      }
      return twins;
    };
    const segment = fc.constantFrom('a', 'A', 'b', 'B', 'ab', 'aB', '\u00e9', '\u00c9');
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));
    fc.assert(
      fc.property(fc.array(path, { maxLength: 30 }), fc.boolean(), (paths, sorted) => {
        // Sorted, most paths share the folder of the one before, as in a listing.
        const input = sorted ? [...paths].sort() : paths;
        expect(findPathTwins(input).filter((t) => t.kind === 'case')).toEqual(byFullWalk(input));
      }),
      { numRuns: 3000 },
    );
  });

  it('finds a case twin for any name with a letter that changes case', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9]{0,10}\.ts$/), (name) => {
        const twins = findPathTwins([name, name.toUpperCase()]);
        expect(twins).toEqual([{ kind: 'case', first: name, second: name.toUpperCase() }]);
      }),
    );
  });
});
