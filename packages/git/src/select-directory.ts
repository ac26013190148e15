import type { GitObjectReader, PreloadOptions } from './engine.js';
import {
  GitCommitMismatchError,
  GitCommitUnavailableError,
  GitLimitExceededError,
  GitNotACommitError,
  GitNotADirectoryError,
  GitUnsafeTreeError,
} from './errors.js';
import { throwIfAborted } from './abort.js';
import type { FetchLimits } from './limits.js';
import { linkProblem } from './link-safety.js';
import { commitTree, join, objectId, parseTree, readVerified, type TreeEntry } from './objects.js';

export type DirectoryEntry =
  | { kind: 'directory'; path: string }
  | { kind: 'file'; path: string; oid: string; mode: 0o644 | 0o755 }
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'submodule'; path: string; commit: string };

/** An entry as the tree walk finds it: a link's target is still a blob to read. */
type WalkedEntry = Exclude<DirectoryEntry, { kind: 'symlink' }> | { kind: 'symlink'; path: string; oid: string };

export interface DirectoryWalk {
  /** Tree id of the directory (the root tree for the whole commit). */
  tree: string;
  /** Parents before children; paths relative to the directory. */
  entries: WalkedEntry[];
  /**
   * Every blob the entries need, each once: link targets first (they are read before
   * anything is written), then file contents in the order they are written.
   */
  blobs: string[];
}

export interface SelectedDirectory {
  /** Tree id of the directory (the root tree for the whole commit). */
  tree: string;
  /** Parents before children; paths relative to the directory. */
  entries: DirectoryEntry[];
}

/**
 * Finds `path` in `commit` and lists everything under it from the trees alone, checking as
 * it goes: the commit is the one asked for (its bytes hash to `commit`), the path is a
 * directory, every tree hashes to its id, and no entry name could leave the destination
 * or plant a `.git`. No blob is read, so this works on a gitdir holding only the trees.
 */
export async function walkDirectory(
  reader: GitObjectReader,
  url: string,
  commit: string,
  path: string,
  signal: AbortSignal | undefined,
  operation: string,
  limits?: Required<FetchLimits>,
  preload?: PreloadOptions,
): Promise<DirectoryWalk> {
  await reader.preloadTrees?.(commit, path, signal, preload);
  const tree = await treeOnPath(reader, url, commit, path, signal, operation);

  const cap = limits === undefined ? undefined : { ...limits, url, path };
  const entries = await listTree(reader, tree, signal, operation, cap);
  const links = new Set<string>();
  const files = new Set<string>();
  for (const entry of entries) {
    if (entry.kind === 'symlink') links.add(entry.oid);
    else if (entry.kind === 'file') files.add(entry.oid);
  }
  return { tree, entries, blobs: [...new Set([...links, ...files])] };
}

/**
 * The tree id of `path` in `commit`, following the path from the commit's root tree with
 * every object hashed to its id: the commit is the one asked for, and each tree on the way
 * is the one its parent names, so the id returned is the origin's own.
 */
export async function treeOnPath(
  reader: GitObjectReader,
  url: string,
  commit: string,
  path: string,
  signal: AbortSignal | undefined,
  operation: string,
): Promise<string> {
  const object = await reader.read(commit);
  if (!object) throw new GitCommitUnavailableError(url, commit);
  const actual = objectId(object.type, object.content);
  if (actual !== commit) throw new GitCommitMismatchError(commit, actual);
  if (object.type !== 'commit') throw new GitNotACommitError(commit, object.type);

  let tree = commitTree(commit, object.content);
  const parts = path === '' ? [] : path.split('/');
  for (const [index, part] of parts.entries()) {
    throwIfAborted(signal, operation);
    const entry = parseTree(tree, await readVerified(reader, tree, 'tree'), parts.slice(0, index).join('/')).find(
      (candidate) => candidate.name === part,
    );
    if (!entry) throw new GitNotADirectoryError(path, commit, 'missing');
    if (entry.mode !== '40000') throw new GitNotADirectoryError(path, commit, kindOfMode(entry.mode));
    tree = entry.oid;
  }
  return tree;
}

/**
 * Reads every link target of a walk and checks that each link stays inside the directory,
 * resolved the way the kernel will. Still before the first byte is written, so a refused
 * tree leaves nothing behind.
 */
async function resolveLinks(
  reader: GitObjectReader,
  walk: DirectoryWalk,
  signal: AbortSignal | undefined,
  operation: string,
): Promise<SelectedDirectory> {
  const entries: DirectoryEntry[] = [];
  const links = new Map<string, string>();
  for (const entry of walk.entries) {
    if (entry.kind !== 'symlink') {
      entries.push(entry);
      continue;
    }
    throwIfAborted(signal, operation);
    const target = await linkTarget(reader, entry.oid, entry.path);
    links.set(entry.path, target);
    entries.push({ kind: 'symlink', path: entry.path, target });
  }
  for (const [linkPath, target] of links) {
    const problem = linkProblem(linkPath, target, links);
    if (problem !== undefined) throw new GitUnsafeTreeError(linkPath, problem, target);
  }
  return { tree: walk.tree, entries };
}

/**
 * The whole selection: the tree walk, then every blob it needs announced to the reader in
 * one `prefetch` (one round trip for an engine that fetched the trees only), then the links.
 */
export async function selectDirectory(
  reader: GitObjectReader,
  url: string,
  commit: string,
  path: string,
  signal: AbortSignal | undefined,
  operation = 'fetchDirectory',
  limits?: Required<FetchLimits>,
  tree?: string,
): Promise<SelectedDirectory> {
  // The blobs come next: an engine may fetch them with the directory's trees (by `tree`,
  // the directory's id if known), and load them with the trees when within the byte cap.
  const preload: PreloadOptions = {
    blobs: true,
    ...(limits === undefined ? {} : { maxBytes: limits.maxBytes }),
    ...(tree === undefined ? {} : { tree }),
  };
  const walk = await walkDirectory(reader, url, commit, path, signal, operation, limits, preload);
  return selectWalked(reader, walk, signal, operation, limits === undefined ? undefined : { ...limits, url, path });
}

/** selectDirectory after the walk: the blobs announced in one `prefetch`, then the links. */
export async function selectWalked(
  reader: GitObjectReader,
  walk: DirectoryWalk,
  signal: AbortSignal | undefined,
  operation: string,
  cap?: WalkCap,
): Promise<SelectedDirectory> {
  throwIfAborted(signal, operation);
  if (cap !== undefined) assertWalkWithin(walk, cap);
  if (walk.blobs.length > 0) await reader.prefetch?.(walk.blobs, signal);
  throwIfAborted(signal, operation);
  if (cap !== undefined) assertSizesWithin(reader, walk, cap);
  return resolveLinks(reader, walk, signal, operation);
}

/** The caps of one fetch, with the repository and directory its errors name. */
export type WalkCap = Required<FetchLimits> & { url: string; path: string };

/**
 * Entries and depth of a walk made earlier (directoryTree's, kept for this fetch, maybe
 * under other caps): the same checks listTree makes while walking.
 */
function assertWalkWithin(walk: DirectoryWalk, cap: WalkCap): void {
  if (walk.entries.length > cap.maxFiles) {
    throw new GitLimitExceededError('files', cap.maxFiles, cap.url, cap.path, `${walk.entries.length} entries`);
  }
  for (const entry of walk.entries) assertDepth(entry.path, cap);
}

function assertDepth(path: string, cap: WalkCap): void {
  const depth = path.split('/').length;
  if (depth > cap.maxDepth)
    throw new GitLimitExceededError('depth', cap.maxDepth, cap.url, cap.path, `${quotePath(path)} is ${depth} deep`);
}

function quotePath(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}

/** Longest link target the kernel takes (PATH_MAX, with its NUL): a longer one is never read whole. */
const MAX_LINK_TARGET = 4095;

/**
 * With an engine that knows sizes once blobs are fetched (system git: `cat-file
 * --batch-check`), the directory's bytes are added up before any blob is loaded into
 * memory or written: a directory over the cap writes nothing at all. A file's blob counts
 * once per file that uses it, as it will on disk. writeEntries counts again as it writes,
 * for engines that cannot tell sizes first.
 */
function assertSizesWithin(reader: GitObjectReader, walk: DirectoryWalk, cap: WalkCap): void {
  if (reader.size === undefined) return;
  let bytes = 0;
  for (const entry of walk.entries) {
    if (entry.kind === 'file') {
      bytes += reader.size(entry.oid) ?? 0;
      if (bytes > cap.maxBytes)
        throw new GitLimitExceededError(
          'bytes',
          cap.maxBytes,
          cap.url,
          cap.path,
          `${bytes} bytes by ${quotePath(entry.path)}`,
        );
    } else if (entry.kind === 'symlink') {
      const size = reader.size(entry.oid) ?? 0;
      if (size > MAX_LINK_TARGET)
        throw new GitUnsafeTreeError(entry.path, `the link target is ${size} bytes, longer than any path`);
    }
  }
}

/**
 * Level by level, so the trees of one level are announced to the reader together: an
 * engine reading through a git process then loads a level in one batch, not one tree per
 * process. A queue, not recursion: a crafted, very deep tree cannot exhaust the call stack.
 */
async function listTree(
  reader: GitObjectReader,
  root: string,
  signal: AbortSignal | undefined,
  operation: string,
  cap: WalkCap | undefined,
): Promise<WalkedEntry[]> {
  const entries: WalkedEntry[] = [];
  let level: Array<{ oid: string; path: string }> = [{ oid: root, path: '' }];
  let depth = 0;
  while (level.length > 0) {
    depth += 1;
    throwIfAborted(signal, operation);
    await reader.prefetch?.([...new Set(level.map((tree) => tree.oid))], signal);
    const next: Array<{ oid: string; path: string }> = [];
    for (const { oid, path } of level) {
      throwIfAborted(signal, operation);
      const seen = new Set<string>();
      for (const entry of parseTree(oid, await readVerified(reader, oid, 'tree'), path)) {
        const entryPath = join(path, entry.name);
        assertSafeName(entry, entryPath, seen);
        const entryOut = toEntry(entry, entryPath);
        entries.push(entryOut);
        // Counted from the trees alone, so a tree past a cap is refused before any of its
        // blobs is fetched; and a level past the depth cap is never read on.
        if (cap !== undefined && entries.length > cap.maxFiles) {
          throw new GitLimitExceededError(
            'files',
            cap.maxFiles,
            cap.url,
            cap.path,
            `more than ${cap.maxFiles} entries`,
          );
        }
        if (cap !== undefined && depth > cap.maxDepth) assertDepth(entryPath, cap);
        if (entryOut.kind === 'directory') next.push({ oid: entry.oid, path: entryPath });
      }
    }
    level = next;
  }
  return entries;
}

function assertSafeName(entry: TreeEntry, entryPath: string, seen: Set<string>): void {
  const { name } = entry;
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\\')) {
    throw new GitUnsafeTreeError(entryPath, 'the entry name is not a plain file name');
  }
  // git refuses to check these out: a `.git` inside the output would be a repository
  // (hooks, config) to whoever opens the folder. Trailing dots and spaces, and case, do
  // not matter on Windows and macOS file systems.
  if (/^\.git[. ]*$/i.test(name)) throw new GitUnsafeTreeError(entryPath, 'a .git entry is never written');
  if (seen.has(name)) throw new GitUnsafeTreeError(entryPath, 'the name appears twice in its tree');
  seen.add(name);
}

function toEntry(entry: TreeEntry, path: string): WalkedEntry {
  switch (entry.mode) {
    case '40000':
      return { kind: 'directory', path };
    case '100644':
    case '100664': // written by very old git versions; git itself reads it as 100644
      return { kind: 'file', path, oid: entry.oid, mode: 0o644 };
    case '100755':
      return { kind: 'file', path, oid: entry.oid, mode: 0o755 };
    case '120000':
      return { kind: 'symlink', path, oid: entry.oid };
    case '160000':
      return { kind: 'submodule', path, commit: entry.oid };
    default:
      throw new GitUnsafeTreeError(path, `unknown mode ${entry.mode}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

async function linkTarget(reader: GitObjectReader, oid: string, path: string): Promise<string> {
  const content = await readVerified(reader, oid, 'blob');
  if (content.length > MAX_LINK_TARGET)
    throw new GitUnsafeTreeError(path, `the link target is ${content.length} bytes, longer than any path`);
  try {
    const target = utf8.decode(content);
    if (!target.includes('\0')) return target;
  } catch {
    // Reported below.
  }
  throw new GitUnsafeTreeError(path, 'the link target is not valid UTF-8 text');
}

function kindOfMode(mode: string): 'file' | 'symlink' | 'submodule' {
  if (mode === '120000') return 'symlink';
  if (mode === '160000') return 'submodule';
  return 'file';
}
