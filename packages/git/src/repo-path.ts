import { GitInvalidPathError } from './errors.js';

/**
 * A directory inside the repository as fetchDirectory takes it: `''` or `'.'` for the whole
 * tree, else `/`-separated names (one trailing `/` is allowed). Returns the canonical form
 * (`skills/a`), or throws before anything is fetched. Pure.
 */
export function normalizeDirectoryPath(path: string): string {
  if (typeof path !== 'string') throw new GitInvalidPathError(String(path), 'not a string');
  if (path === '' || path === '.' || path === './') return '';
  if (/[\u0000-\u001f\u007f]/.test(path)) throw new GitInvalidPathError(path, 'contains a control character or NUL');
  if (path.includes('\\')) throw new GitInvalidPathError(path, 'contains a backslash (use /)');
  if (path.startsWith('/'))
    throw new GitInvalidPathError(path, 'is absolute (paths are relative to the repository root)');
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  for (const part of trimmed.split('/')) {
    if (part === '') throw new GitInvalidPathError(path, 'has an empty segment (//)');
    if (part === '.' || part === '..') throw new GitInvalidPathError(path, `has a ${part} segment`);
    if (part.toLowerCase() === '.git') throw new GitInvalidPathError(path, 'names a .git folder');
  }
  return trimmed;
}
