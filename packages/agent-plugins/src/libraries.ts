import { createRequire } from 'node:module';
import type * as Fflate from 'fflate';
import type * as Levenshtein from 'fastest-levenshtein';
import type * as Minimatch from 'minimatch';
import type * as NodeCrypto from 'node:crypto';

/*
 * The libraries only some calls need, loaded by the first call that does instead of with the
 * package: on Node 20 fflate, minimatch, fastest-levenshtein and node:crypto took ~23 ms of a
 * process's start (fflate builds its tables as it loads), and `agentproto plugin validate` on
 * a folder needs none of them (nothing to inflate, no glob, no misspelled key, no hash). Code
 * imports them as `#libraries` (package.json `imports`): this file, or under the `browser`
 * condition (a browser has no synchronous loader) libraries.browser.ts, which imports them the
 * usual way.
 */
const load = createRequire(import.meta.url);

/** The module `name`, required by the first call and kept. */
function onFirstUse<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= load(name) as T;
    return loaded;
  };
}

/** fflate: the inflaters of uploads (.zip entries, .tar.gz). */
export const fflate = onFirstUse<typeof Fflate>('fflate');

/** minimatch: include globs, and the globs an import reports. */
export const minimatch = onFirstUse<typeof Minimatch>('minimatch');

/** fastest-levenshtein: the key a misspelled one was probably meant to be. */
export const levenshtein = onFirstUse<typeof Levenshtein>('fastest-levenshtein');

/** node:crypto: a bundle's digest, the random names of staging folders. */
export const nodeCrypto = onFirstUse<typeof NodeCrypto>('node:crypto');
