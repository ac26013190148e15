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
let fflateModule: typeof Fflate | undefined;
let minimatchModule: typeof Minimatch | undefined;
let levenshteinModule: typeof Levenshtein | undefined;
let cryptoModule: typeof NodeCrypto | undefined;

/** fflate: the inflaters of uploads (.zip entries, .tar.gz). */
export function fflate(): typeof Fflate {
  fflateModule ??= load('fflate') as typeof Fflate;
  return fflateModule;
}

/** minimatch: include globs, and the globs an import reports. */
export function minimatch(): typeof Minimatch {
  minimatchModule ??= load('minimatch') as typeof Minimatch;
  return minimatchModule;
}

/** fastest-levenshtein: the key a misspelled one was probably meant to be. */
export function levenshtein(): typeof Levenshtein {
  levenshteinModule ??= load('fastest-levenshtein') as typeof Levenshtein;
  return levenshteinModule;
}

/** node:crypto: a bundle's digest, the random names of staging folders. */
export function nodeCrypto(): typeof NodeCrypto {
  cryptoModule ??= load('node:crypto') as typeof NodeCrypto;
  return cryptoModule;
}
