/** Symlink hops followed before a chain counts as a loop; the kernel's limit (ELOOP) is 40. */
const MAX_HOPS = 40;

/**
 * Why a symlink must not be written, or undefined if it stays inside the directory.
 *
 * `linkPath` is the link's path relative to the fetched directory, `target` its stored
 * target, `links` every symlink of the directory (path → target). The target is resolved
 * the way the kernel will resolve it once written: component by component, following the
 * directory's other links. A purely lexical check is not enough: with `s -> .`, the link
 * `a -> s/../x` normalizes to `x` but really reads the directory's parent. Every step must
 * stay inside, even one that comes back (`../dir/file` leaves, whatever it names), since
 * outside the directory there is only whatever lies around the destination.
 */
export function linkProblem(linkPath: string, target: string, links: ReadonlyMap<string, string>): string | undefined {
  const start = linkPath.split('/').slice(0, -1);
  return walk(start, target, links);
}

function walk(start: string[], target: string, links: ReadonlyMap<string, string>): string | undefined {
  if (target === '') return 'the link is empty';
  if (target.startsWith('/')) return 'the link is absolute';
  const stack = [...start];
  const pending = target.split('/');
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (stack.length === 0) return 'the link leads outside the directory';
      stack.pop();
      continue;
    }
    stack.push(part);
    const next = links.get(stack.join('/'));
    if (next === undefined) continue;
    hops += 1;
    if (hops > MAX_HOPS) return 'the link is part of a loop';
    if (next === '') return 'the link goes through an empty link';
    if (next.startsWith('/')) return 'the link goes through an absolute link';
    // The link's own name is replaced by its target, read from the link's folder.
    stack.pop();
    pending.unshift(...next.split('/'));
  }
  return undefined;
}
