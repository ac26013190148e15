/**
 * Why a symbolic link at `path` (relative, `/`-separated) with `target` could leave the
 * tree it sits in, or undefined when it cannot. Checked on the text alone: the target must
 * be relative, hold no NUL or backslash, and resolved from the link's folder must never
 * climb above the root at any step ("a/../../x" is refused even though "x" exists).
 * Whether a link resolves through other links is the store's sealing check, which follows
 * every link once the tree is written.
 */
export function linkStaysInside(path: string, target: string): string | undefined {
  if (target === '') return 'the target is empty';
  if (target.includes('\0')) return 'the target holds NUL';
  if (target.includes('\\')) return 'the target holds a backslash';
  if (target.startsWith('/') || /^[A-Za-z]:/.test(target)) return 'the target is absolute';
  const depth = path.split('/').length - 1;
  let level = depth;
  for (const segment of target.split('/')) {
    if (segment === '..') {
      level -= 1;
      if (level < 0) return 'the target leaves the tree';
    } else if (segment !== '' && segment !== '.') {
      level += 1;
    }
  }
  return undefined;
}
