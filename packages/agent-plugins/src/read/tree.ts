// A package held in memory (path → bytes, mode, link target) behind the PackageFs interface,
// so the very reader that reads a folder reads it, with the same resolution, limits and
// findings. No `node:` import: this is what a browser, a worker or an edge function reads.
import { type PackageReadLimits, type PluginReader, createPluginReader } from './reader.js';
import type { PackageDirent, PackageFileHandle, PackageFs, PackageStats } from './resolve.js';
import { packagePathSegments } from './resolve.js';
import { byteOrder } from '../text.js';

/**
 * One entry of a package tree. Folders are implied by the paths below them; a `directory`
 * entry is needed only for an empty one.
 *
 * - `file`: its bytes, and its permission bits (`mode`, default 0o644): any executable bit
 *   makes it executable, as on a disk. `size` is set only when `bytes` holds less than the
 *   file (an archive reader stops at the per-file limit): the reader then refuses it as too
 *   large without reading it, as it refuses a large file on a disk.
 * - `symlink`: its target as written, resolved inside the tree by the rules of a folder
 *   (§4.1); an absolute target is always outside, since a tree has no place on a disk.
 * - `special`: a pipe, socket or device (a tar archive can hold one): never read.
 */
export type PackageTreeEntry =
  | { type: 'file'; bytes: Uint8Array; mode?: number; size?: number }
  | { type: 'directory' }
  | { type: 'symlink'; target: string }
  | { type: 'special'; kind: 'fifo' | 'socket' | 'character-device' | 'block-device' };

/** A package in memory: package paths (relative, `/`-separated) to entries. */
export type PackageTree = ReadonlyMap<string, PackageTreeEntry>;

/** Why a tree's entry could not be placed; the tree is refused as a whole (see openTreeReader). */
export interface TreeProblem {
  kind: 'path-invalid' | 'duplicate' | 'file-dir-conflict' | 'entry-unsupported';
  /** The path as the tree spells it, control characters escaped. */
  path: string;
}

const S_IFMT = 0o170000;
const TYPE_BITS = {
  file: 0o100000,
  directory: 0o040000,
  symlink: 0o120000,
  fifo: 0o010000,
  socket: 0o140000,
  'character-device': 0o020000,
  'block-device': 0o060000,
} as const;

interface TreeNode {
  readonly ino: number;
  readonly mode: number;
  readonly entry: PackageTreeEntry | undefined;
  /** A folder's entries by name. */
  readonly children: Map<string, TreeNode> | undefined;
}

/** The tree's root on its PackageFs: no disk path, so no absolute link target can spell it. */
const TREE_ROOT = '/';
const FILE_FLAG = 0;
const DIRECTORY_FLAG = 1;

/** A path as a finding may show it: control characters escaped, never more than 4096 characters. */
export function shownPath(path: string): string {
  const escaped = JSON.stringify(path).slice(1, -1).replaceAll('\\"', '"');
  return escaped.length > 4096 ? `${escaped.slice(0, 4096)}…` : escaped;
}

/**
 * The folders and entries of a tree, and what of it could not be placed: a path that is not a
 * package path, two entries at one path (`a` and `./a`), or an entry below a file or link.
 */
function buildTree(tree: PackageTree): { root: TreeNode; problems: TreeProblem[] } {
  let ino = 1;
  const folder = (): TreeNode => ({
    ino: ino++,
    mode: TYPE_BITS.directory | 0o755,
    entry: undefined,
    children: new Map(),
  });
  const root = folder();
  const problems: TreeProblem[] = [];
  // Sorted first, so what is refused does not depend on the order the map was filled in.
  const entries = [...tree.entries()].sort(([a], [b]) => byteOrder(String(a), String(b)));
  const placed = new Set<string>();
  for (const [path, entry] of entries) {
    const segments = packagePathSegments(path);
    if (segments === undefined || segments.length === 0) {
      problems.push({ kind: 'path-invalid', path: shownPath(String(path)) });
      continue;
    }
    if (!isTreeEntry(entry)) {
      problems.push({ kind: 'entry-unsupported', path: shownPath(path) });
      continue;
    }
    const key = segments.join('/');
    if (placed.has(key)) {
      problems.push({ kind: 'duplicate', path: shownPath(path) });
      continue;
    }
    placed.add(key);
    let parent = root;
    let conflict = false;
    for (const name of segments.slice(0, -1)) {
      let next = parent.children?.get(name);
      if (next === undefined) {
        next = folder();
        parent.children?.set(name, next);
      }
      if (next.children === undefined) {
        conflict = true;
        break;
      }
      parent = next;
    }
    const name = segments[segments.length - 1] as string;
    const existing = parent.children?.get(name);
    if (conflict || (existing !== undefined && !(entry.type === 'directory' && existing.children !== undefined))) {
      problems.push({ kind: 'file-dir-conflict', path: shownPath(path) });
      continue;
    }
    if (existing !== undefined) continue;
    parent.children?.set(name, nodeOf(entry, ino++));
  }
  return { root, problems };
}

const SPECIAL_KINDS = new Set(['fifo', 'socket', 'character-device', 'block-device']);
const isCount = (value: unknown) => value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0);

/** Whether a value from a host is one of the entry shapes (bytes from any realm: a view of one byte per element). */
function isTreeEntry(entry: unknown): entry is PackageTreeEntry {
  if (typeof entry !== 'object' || entry === null) return false;
  const { type } = entry as { type?: unknown };
  if (type === 'directory') return true;
  if (type === 'symlink') return typeof (entry as { target?: unknown }).target === 'string';
  if (type === 'special') return SPECIAL_KINDS.has((entry as { kind?: unknown }).kind as string);
  if (type !== 'file') return false;
  const { bytes, mode, size } = entry as { bytes?: unknown; mode?: unknown; size?: unknown };
  return (
    ArrayBuffer.isView(bytes) &&
    (bytes as Uint8Array).BYTES_PER_ELEMENT === 1 &&
    isCount(mode) &&
    isCount(size) &&
    (size === undefined || (size as number) >= (bytes as Uint8Array).length)
  );
}

function nodeOf(entry: PackageTreeEntry, ino: number): TreeNode {
  switch (entry.type) {
    case 'file':
      return { ino, mode: TYPE_BITS.file | ((entry.mode ?? 0o644) & 0o7777), entry, children: undefined };
    case 'directory':
      return { ino, mode: TYPE_BITS.directory | 0o755, entry, children: new Map() };
    case 'symlink':
      return { ino, mode: TYPE_BITS.symlink | 0o777, entry, children: undefined };
    default:
      return { ino, mode: TYPE_BITS[entry.kind] | 0o644, entry, children: undefined };
  }
}

function fsError(code: string, path: string): Error {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}

function statsOf(node: TreeNode): PackageStats {
  const type = node.mode & S_IFMT;
  const entry = node.entry;
  const size =
    entry?.type === 'file' ? (entry.size ?? entry.bytes.length) : entry?.type === 'symlink' ? entry.target.length : 0;
  return {
    isFile: () => type === TYPE_BITS.file,
    isDirectory: () => type === TYPE_BITS.directory,
    isSymbolicLink: () => type === TYPE_BITS.symlink,
    isFIFO: () => type === TYPE_BITS.fifo,
    isSocket: () => type === TYPE_BITS.socket,
    isCharacterDevice: () => type === TYPE_BITS['character-device'],
    isBlockDevice: () => type === TYPE_BITS['block-device'],
    size,
    mode: node.mode,
    dev: 0,
    ino: node.ino,
  };
}

/** The PackageFs of a built tree: absolute paths below TREE_ROOT, no link followed by any call but realpath. */
function treeFs(root: TreeNode): PackageFs {
  const at = (path: string): TreeNode => {
    let node = root;
    for (const name of path.split('/').filter((s) => s !== '')) {
      if (node.children === undefined) throw fsError('ENOTDIR', path);
      const next = node.children.get(name);
      if (next === undefined) throw fsError('ENOENT', path);
      node = next;
    }
    return node;
  };
  return {
    // The reader asks only for the root's real path; every other path it builds holds no link.
    realpath: async (path) => {
      const node = at(path);
      if (node !== root) throw fsError('EINVAL', path);
      return TREE_ROOT;
    },
    lstat: async (path) => statsOf(at(path)),
    readlink: async (path) => {
      const entry = at(path).entry;
      if (entry?.type !== 'symlink') throw fsError('EINVAL', path);
      return entry.target;
    },
    readdir: async (path) => {
      const node = at(path);
      if (node.children === undefined) throw fsError('ENOTDIR', path);
      return [...node.children].map(([name, child]): PackageDirent => {
        const stats = statsOf(child);
        return {
          name,
          isFile: () => stats.isFile(),
          isDirectory: () => stats.isDirectory(),
          isSymbolicLink: () => stats.isSymbolicLink(),
        };
      });
    },
    open: async (path, flags) => {
      const node = at(path);
      if (node.entry?.type === 'symlink') throw fsError('ELOOP', path);
      if (flags === DIRECTORY_FLAG && node.children === undefined) throw fsError('ENOTDIR', path);
      if (node.entry?.type === 'special') throw fsError('ENXIO', path);
      return handleOf(node);
    },
  };
}

function handleOf(node: TreeNode): PackageFileHandle {
  const bytes = node.entry?.type === 'file' ? node.entry.bytes : new Uint8Array(0);
  return {
    stat: async () => statsOf(node),
    read: async (buffer, offset, length, position) => {
      const from = Math.min(position ?? 0, bytes.length);
      const piece = bytes.subarray(from, Math.min(bytes.length, from + length));
      buffer.set(piece, offset);
      return { bytesRead: piece.length };
    },
    close: async () => undefined,
  };
}

/**
 * A reader over a package tree, reading it as a conformant client reads a folder: the same
 * resolution of paths and links, the same limits, the same findings; and the problems that
 * keep the tree from being read as given (its caller refuses a tree that has any).
 */
export function openTreeReader(
  tree: PackageTree,
  limits: PackageReadLimits = {},
): { reader: PluginReader; problems: TreeProblem[] } {
  const { root, problems } = buildTree(tree);
  const reader = createPluginReader(TREE_ROOT, limits, {
    fs: treeFs(root),
    fileFlags: FILE_FLAG,
    directoryFlags: DIRECTORY_FLAG,
    absoluteTargets: 'never',
  });
  return { reader, problems };
}
