import type { DirectoryWalk } from './select-directory.js';

/**
 * A few values per (work folder's gitdir, commit, path), taken on use: the newest 64 are
 * kept, so memory stays small.
 */
class TakenOnUse<T> {
  private readonly values = new Map<string, T>();

  remember(gitdir: string, commit: string, path: string, value: T): void {
    const key = keyOf(gitdir, commit, path);
    this.values.delete(key);
    this.values.set(key, value);
    // Oldest first: a Map iterates in insertion order.
    for (const old of this.values.keys()) {
      if (this.values.size <= LIMIT) break;
      this.values.delete(old);
    }
  }

  take(gitdir: string, commit: string, path: string): T | undefined {
    const key = keyOf(gitdir, commit, path);
    const value = this.values.get(key);
    this.values.delete(key);
    return value;
  }
}

const LIMIT = 64;

function keyOf(gitdir: string, commit: string, path: string): string {
  return `${gitdir}\0${commit}\0${path}`;
}

/**
 * Walks directoryTree made in a caller's work folder, kept for the fetchDirectory that
 * usually follows with the same folder, commit and path: it then skips the check of the
 * gitdir and the second walk, and fetches the blobs at once. A walk is a verified fact
 * about immutable objects (every tree hashed to its id), so reusing it is safe; what it
 * assumes is only that the work folder still holds the gitdir, which is the caller's to
 * keep between the two calls.
 */
const walks = new TakenOnUse<DirectoryWalk>();

export function rememberWalk(gitdir: string, commit: string, path: string, walk: DirectoryWalk): void {
  walks.remember(gitdir, commit, path, walk);
}

export function takeWalk(gitdir: string, commit: string, path: string): DirectoryWalk | undefined {
  return walks.take(gitdir, commit, path);
}

/**
 * Tree ids directoryTreeId verified in a caller's work folder (the commit and the trees on
 * the way hashed to their ids), kept for the fetchDirectory that usually follows with the
 * same folder, commit and path: its engine can then fetch the directory by id at once. Only
 * a hint for the fetch (the walk verifies everything again).
 */
const treeIds = new TakenOnUse<string>();

export function rememberTreeId(gitdir: string, commit: string, path: string, tree: string): void {
  treeIds.remember(gitdir, commit, path, tree);
}

export function takeTreeId(gitdir: string, commit: string, path: string): string | undefined {
  return treeIds.take(gitdir, commit, path);
}
