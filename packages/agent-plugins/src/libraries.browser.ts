import * as fflateModule from 'fflate';
import * as minimatchModule from 'minimatch';

/*
 * `#libraries` under the `browser` condition (package.json `imports`): libraries.ts's
 * accessors over static imports, as a browser has no synchronous loader. A bundle keeps only
 * the libraries its calls reach. No `levenshtein` or `nodeCrypto`: their users (the
 * configuration loader, bundle hashing, writing a folder) are not in the browser entry.
 */

export function fflate(): typeof fflateModule {
  return fflateModule;
}

export function minimatch(): typeof minimatchModule {
  return minimatchModule;
}
