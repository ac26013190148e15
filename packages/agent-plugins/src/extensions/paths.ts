import { isDotGit } from '@agentproto/archive';

/**
 * Why `path` cannot be a package path, or undefined when it can: relative, `/`-separated,
 * every segment non-empty and neither `.` nor `..`, no backslash, NUL or drive letter
 * (§4.1: a package path stays inside the plugin root, whatever the file system).
 */
export function packagePathProblem(path: string): string | undefined {
  if (path === '') return 'is empty';
  if (path.includes('\0')) return 'contains NUL';
  if (path.startsWith('/')) return 'is absolute';
  if (path.includes('\\')) return 'contains a backslash (use "/")';
  if (/^[A-Za-z]:/.test(path)) return 'starts with a drive letter';
  for (const segment of path.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '.' || segment === '..') return `contains a "${segment}" segment`;
    if (isDotGit(segment)) return 'names a .git entry (in a spelling git itself refuses), which no package holds';
  }
  return undefined;
}

/**
 * Sets `key` as an own enumerable property. Plain assignment of `__proto__` would change the
 * object's prototype instead, and the key would vanish from the written JSON.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
