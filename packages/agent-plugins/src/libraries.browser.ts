import { Gunzip, Inflate, inflateSync } from 'fflate';
import { escape as escapeGlob, minimatch as match } from 'minimatch';

/*
 * `#libraries` under the `browser` condition (package.json `imports`): libraries.ts's
 * accessors over static imports, as a browser has no synchronous loader. Each hands over only
 * the members the package calls, by name, so a bundle keeps those alone (fflate's deflaters,
 * zip writers and workers are left out). No `levenshtein` or `nodeCrypto`: their users (the
 * configuration loader, bundle hashing, writing a folder) are not in the browser entry.
 */
const fflateUsed = { Gunzip, Inflate, inflateSync };
const minimatchUsed = { escape: escapeGlob, minimatch: match };

export function fflate(): typeof fflateUsed {
  return fflateUsed;
}

export function minimatch(): typeof minimatchUsed {
  return minimatchUsed;
}
