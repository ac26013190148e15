import type { GitObjectReader } from './engine.js';
import {
  GitCommitMismatchError,
  GitCommitUnavailableError,
  GitNotACommitError,
  GitNotADirectoryError,
  GitUnsafeTreeError,
} from './errors.js';
import { throwIfAborted } from './abort.js';
import { linkProblem } from './link-safety.js';
import { commitTree, join, objectId, parseTree, readVerified, type TreeEntry } from './objects.js';

export type DirectoryEntry =
  | { kind: 'directory'; path: string }
  | { kind: 'file'; path: string; oid: string; mode: 0o644 | 0o755 }
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'submodule'; path: string; commit: string };

export interface SelectedDirectory {
  /** Tree id of the directory (the root tree for the whole commit). */
  tree: string;
  /** Parents before children; paths relative to the directory. */
  entries: DirectoryEntry[];
}

/**
 * Finds `path` in `commit` and lists everything under it, checking as it goes: the commit
 * is the one asked for (its bytes hash to `commit`), every tree hashes to its id, no entry
 * name could leave the destination or plant a `.git`, and every symlink stays inside. It
 * all happens before the first byte is written, so a refused tree leaves nothing behind.
 */
export async function selectDirectory(
  reader: GitObjectReader,
  url: string,
  commit: string,
  path: string,
  signal: AbortSignal | undefined,
): Promise<SelectedDirectory> {
  const object = await reader.read(commit);
  if (!object) throw new GitCommitUnavailableError(url, commit);
  const actual = objectId(object.type, object.content);
  if (actual !== commit) throw new GitCommitMismatchError(commit, actual);
  if (object.type !== 'commit') throw new GitNotACommitError(commit, object.type);

  let tree = commitTree(commit, object.content);
  const parts = path === '' ? [] : path.split('/');
  for (const [index, part] of parts.entries()) {
    throwIfAborted(signal, 'fetchDirectory');
    const entry = parseTree(tree, await readVerified(reader, tree, 'tree'), parts.slice(0, index).join('/')).find(
      (candidate) => candidate.name === part,
    );
    if (!entry) throw new GitNotADirectoryError(path, commit, 'missing');
    if (entry.mode !== '40000') throw new GitNotADirectoryError(path, commit, kindOfMode(entry.mode));
    tree = entry.oid;
  }

  const entries = await listTree(reader, tree, signal);
  const links = new Map(entries.flatMap((entry) => (entry.kind === 'symlink' ? [[entry.path, entry.target] as const] : [])));
  for (const [linkPath, target] of links) {
    const problem = linkProblem(linkPath, target, links);
    if (problem !== undefined) throw new GitUnsafeTreeError(linkPath, problem, target);
  }
  return { tree, entries };
}

async function listTree(reader: GitObjectReader, root: string, signal: AbortSignal | undefined): Promise<DirectoryEntry[]> {
  const entries: DirectoryEntry[] = [];
  // Depth-first with an explicit stack: a crafted, very deep tree cannot exhaust the call stack.
  const pending: Array<{ oid: string; path: string }> = [{ oid: root, path: '' }];
  while (pending.length > 0) {
    throwIfAborted(signal, 'fetchDirectory');
    const { oid, path } = pending.pop() as { oid: string; path: string };
    const children: Array<{ oid: string; path: string }> = [];
    const seen = new Set<string>();
    for (const entry of parseTree(oid, await readVerified(reader, oid, 'tree'), path)) {
      const entryPath = join(path, entry.name);
      assertSafeName(entry, entryPath, seen);
      const entryOut = await toEntry(reader, entry, entryPath);
      entries.push(entryOut);
      if (entryOut.kind === 'directory') children.push({ oid: entry.oid, path: entryPath });
    }
    // Reversed so the stack pops them in tree order: the output order is stable and readable.
    pending.push(...children.reverse());
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

async function toEntry(reader: GitObjectReader, entry: TreeEntry, path: string): Promise<DirectoryEntry> {
  switch (entry.mode) {
    case '40000':
      return { kind: 'directory', path };
    case '100644':
    case '100664': // written by very old git versions; git itself reads it as 100644
      return { kind: 'file', path, oid: entry.oid, mode: 0o644 };
    case '100755':
      return { kind: 'file', path, oid: entry.oid, mode: 0o755 };
    case '120000':
      return { kind: 'symlink', path, target: await linkTarget(reader, entry.oid, path) };
    case '160000':
      return { kind: 'submodule', path, commit: entry.oid };
    default:
      throw new GitUnsafeTreeError(path, `unknown mode ${entry.mode}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

async function linkTarget(reader: GitObjectReader, oid: string, path: string): Promise<string> {
  const content = await readVerified(reader, oid, 'blob');
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
