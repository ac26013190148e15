import * as path from 'node:path';

/**
 * Whether `candidate` is `root` itself or lies below it, after resolving both (`..`, `.`,
 * relative to the current folder) with the host's path rules. Purely textual: resolve
 * symbolic links first (`fs.realpath`) when checking where a link really points.
 */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(path.resolve(root), path.resolve(candidate));
  if (relative === '') return true;
  // A name that merely starts with ".." (`..cache`) is inside; only a ".." segment leaves.
  if (relative === '..' || relative.startsWith(`..${path.sep}`)) return false;
  // On Windows, a candidate on another drive comes back absolute.
  return !path.isAbsolute(relative);
}
