import { PathCollisionError } from './errors.js';
import { normalizeBundlePath } from './normalize.js';
import { keepShape } from '../tar/keep-shape.js';

/**
 * The key of a bundle file in the overlay map: its canonical path (NFC, `/`-separated, no
 * `.`/`..`/empty segments). Two spellings with one key are one file, so "last wins" holds
 * for them too. Throws `PathError` for an unsafe path, and for a folder spelling (`a/`).
 */
export function pathKey(path: string): string {
  return normalizeBundlePath(path, { file: true }).path;
}

/**
 * Two bundle paths that are "the same" somewhere:
 * - `normalization`: two inputs that differ in Unicode normalisation (NFC vs NFD) but have
 *   one `pathKey`: harmless, they are one entry and the later one wins; reported so a
 *   host can say so. (`./a` and `a` differ only in spelling and are not reported.)
 * - `case`: two paths (or folder prefixes) that differ only by letter case: distinct on
 *   Linux, one file on macOS and Windows. `first` is the spelling seen first.
 */
export interface PathTwin {
  readonly kind: 'normalization' | 'case';
  readonly first: string;
  readonly second: string;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The case folding of case-insensitive file systems, approximated: lower case per code
 * point (not per string, which would apply the Greek final-sigma rule), then NFC again.
 */
function foldCase(segment: string): string {
  if (PRINTABLE_ASCII.test(segment)) return segment.toLowerCase();
  let folded = '';
  for (const ch of segment) folded += ch.toLowerCase();
  return folded.normalize('NFC');
}

interface TrieNode {
  /** The first spelling of this segment that reached the node. */
  spelling: string;
  /** Created on the first child: most nodes are files and have none. */
  children: Map<string, TrieNode> | undefined;
}

/** `./a//b` → `a/b`: how a path was written, minus what only spells it differently. */
const spellingOf = (raw: string) =>
  raw
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');

/**
 * Finds normalisation twins and case twins in a set of bundle file paths. Folder prefixes
 * count (`Lib/a.ts` and `lib/b.ts` are case twins `Lib` / `lib`: one folder on macOS).
 * Linear in the total number of segments: a trie keyed by case-folded segment.
 */
export function findPathTwins(paths: Iterable<string>): PathTwin[] {
  const finder = new TwinFinder();
  for (const raw of paths) finder.add(raw);
  return finder.twins;
}

/**
 * findPathTwins's state, and its step for one path: a method called for each path, not a
 * loop run once a call. V8 compiles a function called thousands of times while the first
 * bundle runs, and a loop run once only for the next call, which then compiled it again
 * while it ran (2,000 files: ~20 ms of compile in the second bundle, on one of two cores).
 */
class TwinFinder {
  readonly twins: PathTwin[] = [];
  private readonly reported = new Set<string>();
  /** Each key's first raw spelling. */
  private readonly firstRaw = new Map<string, string>();
  private readonly root: TrieNode = { spelling: '', children: undefined };
  private lastFolder = '';
  private lastFolderNode: TrieNode | undefined;

  add(raw: string): void {
    const { twins, reported, root } = this;
    const key = pathKey(raw);
    const seen = this.firstRaw.get(key);
    if (seen === undefined) this.firstRaw.set(key, raw);
    else if (seen !== raw && spellingOf(seen) !== spellingOf(raw))
      report(twins, reported, 'normalization', spellingOf(seen), spellingOf(raw));

    // A path in the folder of the path before (spelled the same) starts at that folder's
    // node: the walk down to it would meet the same nodes with the same spellings and find
    // nothing new. Most paths of a listing share their folder with the one before.
    const slash = key.lastIndexOf('/');
    const folder = slash === -1 ? '' : key.slice(0, slash);
    const fromFolder = this.lastFolderNode !== undefined && folder === this.lastFolder;
    const segments = fromFolder ? [key.slice(slash + 1)] : key.split('/');
    let node = fromFolder ? this.lastFolderNode! : root;
    // The folder's node, once the walk reached it with every spelling as first seen.
    let folderNode = fromFolder || segments.length === 1 ? node : undefined;
    for (let depth = 0; depth < segments.length; depth++) {
      const segment = segments[depth]!;
      const folded = foldCase(segment);
      node.children ??= new Map();
      let child = node.children.get(folded);
      if (child === undefined) {
        child = { spelling: segment, children: undefined };
        node.children.set(folded, child);
      } else if (child.spelling !== segment) {
        const prefix = !fromFolder ? segments.slice(0, depth) : folder === '' ? [] : folder.split('/');
        report(twins, reported, 'case', firstSpellingOf(root, prefix, child.spelling), [...prefix, segment].join('/'));
        // Everything below is the same clash again: one report per path is enough.
        break;
      }
      node = child;
      if (depth === segments.length - 2) folderNode = node;
    }
    this.lastFolder = folder;
    this.lastFolderNode = folderNode;
  }
}

// A TwinFinder no call uses, made once for its shape alone: `add` checks for it, and the
// finder of a call lives only as long as the call (see keepShape).
keepShape(new TwinFinder());

function report(twins: PathTwin[], reported: Set<string>, kind: PathTwin['kind'], first: string, second: string): void {
  const id = `${kind}\0${first}\0${second}`;
  if (reported.has(id)) return;
  reported.add(id);
  twins.push({ kind, first, second });
}

/** The first-seen spelling of the folder path `prefix`, then `last`. */
function firstSpellingOf(root: TrieNode, prefix: readonly string[], last: string): string {
  const parts: string[] = [];
  let node: TrieNode | undefined = root;
  for (const segment of prefix) {
    node = node.children?.get(foldCase(segment));
    if (node === undefined) break;
    parts.push(node.spelling);
  }
  return [...parts, last].join('/');
}

/** A file that another path needs as a folder: `lib` and `lib/x.ts` cannot both be unpacked. */
export interface FileDirectoryConflict {
  readonly file: string;
  readonly inside: string;
}

/** Finds every file of the set that another path of the set puts something inside. */
export function findFileDirectoryConflicts(paths: Iterable<string>): FileDirectoryConflict[] {
  const keys = new Set<string>();
  for (const raw of paths) keys.add(pathKey(raw));
  const conflicts: FileDirectoryConflict[] = [];
  for (const key of keys) {
    // Each proper prefix of `key` must be a folder: it must not be a file of the set.
    let slash = key.indexOf('/');
    while (slash !== -1) {
      const folder = key.slice(0, slash);
      if (keys.has(folder)) conflicts.push({ file: folder, inside: key });
      slash = key.indexOf('/', slash + 1);
    }
  }
  return conflicts;
}

/**
 * Refuses a set of bundle paths that cannot be unpacked faithfully everywhere: case twins
 * (a runner on macOS or Windows would silently keep one of the two files, so the bundle
 * that ran would not be the bundle that was checked) and file/folder conflicts. NFC/NFD
 * twins are not refused: they have one key, and the later one already won the overlay.
 */
export function assertNoPathCollisions(paths: Iterable<string>): void {
  const list = [...paths];
  const caseTwin = findPathTwins(list).find((twin) => twin.kind === 'case');
  if (caseTwin) throw new PathCollisionError('case', caseTwin.first, caseTwin.second);
  const conflict = findFileDirectoryConflicts(list)[0];
  if (conflict) throw new PathCollisionError('file-directory', conflict.file, conflict.inside);
}
