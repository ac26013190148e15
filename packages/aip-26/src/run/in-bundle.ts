import { normalizeBundlePath } from '../paths/index.js';
import { RunFileMissingError } from './errors.js';
import { type RunOptions, type RunValue, parseRun } from './parse.js';

const fold = (path: string) => path.toLowerCase();

/**
 * Checks that the file a `run` block starts is one of `bundleFiles` (bundle-internal paths,
 * compared by canonical form, so `./tool.ts` and NFD spellings match). Returns that file, or
 * `undefined` for the exec and shell forms, whose targets a bundle cannot vouch for.
 * Throws `RunFileMissingError` naming the file (and a case-twin when there is one), and
 * whatever `parseRun` throws for a bad block.
 */
export function assertRunFileInBundle(
  run: RunValue,
  bundleFiles: Iterable<string>,
  options: RunOptions = {},
): string | undefined {
  const parsed = parseRun(run, options);
  if (parsed.form !== 'file') return undefined;
  let sameButCase: string | undefined;
  for (const entry of bundleFiles) {
    // Folder entries (`lib/`) may be listed too: accept the spelling, they never match a file.
    const key = normalizeBundlePath(entry, { allowRoot: true }).path;
    if (key === parsed.file) return parsed.file;
    if (sameButCase === undefined && fold(key) === fold(parsed.file)) sameButCase = key;
  }
  throw new RunFileMissingError(parsed.file, sameButCase);
}
