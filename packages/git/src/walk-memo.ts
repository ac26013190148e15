import type { DirectoryWalk } from './select-directory.js';

/**
 * Walks directoryTree made in a caller's work folder, kept for the fetchDirectory that
 * usually follows with the same folder, commit and path: it then skips the check of the
 * gitdir and the second walk, and fetches the blobs at once. A walk is a verified fact
 * about immutable objects (every tree hashed to its id), so reusing it is safe; what it
 * assumes is only that the work folder still holds the gitdir, which is the caller's to
 * keep between the two calls. Taken on use, and few: memory stays small.
 */
const walks = new Map<string, DirectoryWalk>();
const LIMIT = 64;

function keyOf(gitdir: string, commit: string, path: string): string {
  return `${gitdir}\0${commit}\0${path}`;
}

export function rememberWalk(gitdir: string, commit: string, path: string, walk: DirectoryWalk): void {
  const key = keyOf(gitdir, commit, path);
  walks.delete(key);
  walks.set(key, walk);
  // Oldest first: a Map iterates in insertion order.
  for (const old of walks.keys()) {
    if (walks.size <= LIMIT) break;
    walks.delete(old);
  }
}

export function takeWalk(gitdir: string, commit: string, path: string): DirectoryWalk | undefined {
  const key = keyOf(gitdir, commit, path);
  const walk = walks.get(key);
  walks.delete(key);
  return walk;
}

/**
 * Tree ids directoryTreeId verified in a caller's work folder (the commit and the trees on
 * the way hashed to their ids), kept for the fetchDirectory that usually follows with the
 * same folder, commit and path: its engine can then fetch the directory by id at once. Only
 * a hint for the fetch (the walk verifies everything again); few, and taken on use.
 */
const treeIds = new Map<string, string>();

export function rememberTreeId(gitdir: string, commit: string, path: string, tree: string): void {
  const key = keyOf(gitdir, commit, path);
  treeIds.delete(key);
  treeIds.set(key, tree);
  for (const old of treeIds.keys()) {
    if (treeIds.size <= LIMIT) break;
    treeIds.delete(old);
  }
}

export function takeTreeId(gitdir: string, commit: string, path: string): string | undefined {
  const key = keyOf(gitdir, commit, path);
  const tree = treeIds.get(key);
  treeIds.delete(key);
  return tree;
}
