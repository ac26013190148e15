// No `node:` import here: the same resolution runs over a folder (read/node.ts) and over an
// in-memory tree (read/tree.ts), in Node and in a browser.

/** Links followed in total while resolving one path: the limit Linux applies (MAXSYMLINKS). */
export const MAX_LINK_HOPS = 40;

/**
 * Why a package path does not resolve to an entry inside the plugin root.
 *
 * | Reason          | When                                                                      |
 * |-----------------|---------------------------------------------------------------------------|
 * | `invalid-path`  | the path is absolute or holds `..`, a backslash, NUL or a drive letter     |
 * | `outside-root`  | a step (`..` or a link target) leaves the plugin root's real path          |
 * | `loop`          | a link is reached again while its own target is still being resolved      |
 * | `too-many-hops` | more than MAX_LINK_HOPS links are followed                                |
 * | `dangling`      | a link's target does not exist (or goes through something not a folder)   |
 * | `missing`       | the path itself does not exist: no link is involved                       |
 * | `not-directory` | the plugin root is not a directory                                        |
 * | `unreadable`    | the filesystem refused a step (permission denied, I/O error)              |
 */
export type ResolveFailureReason =
  | 'invalid-path'
  | 'outside-root'
  | 'loop'
  | 'too-many-hops'
  | 'dangling'
  | 'missing'
  | 'not-directory'
  | 'unreadable';

export interface ResolveFailure {
  ok: false;
  reason: ResolveFailureReason;
  /**
   * The leading part of the package path whose resolution failed (`''` for the plugin root),
   * e.g. `skills` when `skills` is a link leaving the root and `skills/a/SKILL.md` was asked
   * for. What a client disables depends on it (§4.1), not only on the path asked for.
   */
  at: string;
  /** The errno code for `unreadable`, for the message; never a value from the package. */
  errno?: string;
}

export type ResolveResult = { ok: true; realPath: string } | ResolveFailure;

/** What the reader asks of an entry's status: the parts of node:fs's Stats it uses. */
export interface PackageStats {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  size: number;
  mode: number;
  dev: number;
  ino: number;
}

/** A folder's entry as listed: the parts of node:fs's Dirent the reader uses. */
export interface PackageDirent {
  name: string;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/**
 * The file operations the reader needs; node:fs/promises unless another one is given. A
 * failure throws an error whose `code` is the errno name (`ENOENT`, `ENOTDIR`, `ELOOP`, ...).
 */
export interface PackageFs {
  realpath(path: string): Promise<string>;
  lstat(path: string): Promise<PackageStats>;
  readlink(path: string): Promise<string>;
  readdir(path: string, options: { withFileTypes: true }): Promise<PackageDirent[]>;
  open(path: string, flags: number): Promise<PackageFileHandle>;
}

export interface PackageFileHandle {
  /**
   * The descriptor, when there is one (node:fs handles have it): the reader proves with it
   * that what it opened is inside the plugin root before reading a byte.
   */
  readonly fd?: number;
  stat(): Promise<PackageStats>;
  read(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}

/**
 * The segments of a package path, or undefined when it is not one: relative, `/`-separated,
 * without `..`, backslash, NUL or a drive letter. `.` and empty segments are dropped, so
 * `./skills/`, `skills` and `skills//` name the same folder; `''` and `.` name the root.
 * Refused rather than normalized: `a/../b` in a package is a sign of a path built to escape,
 * and a backslash is a separator on Windows but a name character here.
 */
export function packagePathSegments(relPath: string): string[] | undefined {
  // Public through resolveInside: a path read from a manifest may be anything, and what is
  // not a string is not a package path (invalid-path), rather than a TypeError here.
  if (typeof relPath !== 'string') return undefined;
  if (relPath.includes('\\') || relPath.includes('\0') || relPath.startsWith('/') || /^[A-Za-z]:/.test(relPath))
    return undefined;
  const segments = relPath.split('/').filter((s) => s !== '' && s !== '.');
  return segments.includes('..') ? undefined : segments;
}

interface Pending {
  name: string;
  /** Index of the segment of the asked-for path this one comes from (link targets inherit it). */
  origin: number;
  /** True when the segment comes from a link target: its absence makes the link dangling. */
  viaLink: boolean;
}

/**
 * Where an absolute link target may lead. `root`: inside the root when it is spelled from
 * the root's real path or from `root` as given (an absolute path), as on a disk. `never`:
 * always outside (an in-memory tree has no place on a disk to be spelled from).
 */
export type AbsoluteTargets = 'root' | 'never';

/** resolveInside, also returning the lstat of the entry reached (what the reader checks an opened file against). */
export async function resolveEntry(
  root: string,
  relPath: string,
  fs: PackageFs,
  absoluteTargets: AbsoluteTargets = 'root',
): Promise<{ ok: true; realPath: string; stats: PackageStats } | ResolveFailure> {
  const segments = packagePathSegments(relPath);
  if (segments === undefined) return { ok: false, reason: 'invalid-path', at: relPath };
  const prefix = (origin: number): string => segments.slice(0, origin + 1).join('/');

  let realRoot: string;
  let rootStats: PackageStats;
  try {
    realRoot = await fs.realpath(root);
    rootStats = await fs.lstat(realRoot);
  } catch (error) {
    return errnoFailure(error, '', false);
  }
  if (!rootStats.isDirectory()) return { ok: false, reason: 'not-directory', at: '' };
  const rootSpellings =
    absoluteTargets === 'never'
      ? []
      : [...new Set(root.startsWith('/') ? [realRoot, root] : [realRoot])].map(splitAbsolute);

  // Pending components, the next one last; a link's target is pushed in its place.
  const pending: Pending[] = segments.map((name, origin) => ({ name, origin, viaLink: false })).reverse();
  // Links whose targets are still being resolved, with the pending depth below which
  // their expansion is finished: meeting one of them again is a loop, not a long chain.
  const expanding: { link: string; depth: number }[] = [];
  let current = realRoot;
  let currentStats = rootStats;
  let hops = 0;

  while (pending.length > 0) {
    while (expanding.length > 0 && pending.length <= (expanding[expanding.length - 1]?.depth ?? 0)) expanding.pop();
    const item = pending.pop() as Pending;
    const at = prefix(item.origin);
    // Only a folder has components: `file/x` (or a link to `file/`) does not exist.
    if (!currentStats.isDirectory()) return { ok: false, reason: item.viaLink ? 'dangling' : 'missing', at };
    if (item.name === '' || item.name === '.') continue;
    if (item.name === '..') {
      // `current` holds no links, so its lexical parent is its real parent.
      if (current === realRoot) return { ok: false, reason: 'outside-root', at };
      current = parentOf(current);
      continue;
    }
    const candidate = current.endsWith('/') ? `${current}${item.name}` : `${current}/${item.name}`;
    let stats: PackageStats;
    try {
      stats = await fs.lstat(candidate);
    } catch (error) {
      return errnoFailure(error, at, item.viaLink);
    }
    if (!stats.isSymbolicLink()) {
      current = candidate;
      currentStats = stats;
      continue;
    }
    if (expanding.some((e) => e.link === candidate)) return { ok: false, reason: 'loop', at };
    hops += 1;
    if (hops > MAX_LINK_HOPS) return { ok: false, reason: 'too-many-hops', at };
    let target: string;
    try {
      target = await fs.readlink(candidate);
    } catch (error) {
      return errnoFailure(error, at, true);
    }
    let targetSegments = target.split('/');
    if (target.startsWith('/')) {
      const rest = belowRoot(targetSegments, rootSpellings);
      if (rest === undefined) return { ok: false, reason: 'outside-root', at };
      current = realRoot;
      currentStats = rootStats;
      targetSegments = rest;
    }
    expanding.push({ link: candidate, depth: pending.length });
    for (let i = targetSegments.length - 1; i >= 0; i--)
      pending.push({ name: targetSegments[i] ?? '', origin: item.origin, viaLink: true });
  }
  return { ok: true, realPath: current, stats: currentStats };
}

/** The parent of an absolute path holding no link, `.` or `..` (what path.dirname gives it). */
function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

function splitAbsolute(path: string): string[] {
  return path.split('/').filter((s) => s !== '' && s !== '.');
}

/** The segments of an absolute link target after the root, or undefined when it does not start at the root. */
function belowRoot(target: string[], rootSpellings: string[][]): string[] | undefined {
  const named = target.filter((s) => s !== '' && s !== '.');
  for (const root of rootSpellings) {
    if (root.length <= named.length && root.every((s, i) => named[i] === s)) return named.slice(root.length);
  }
  return undefined;
}

function errnoFailure(error: unknown, at: string, viaLink: boolean): ResolveFailure {
  const errno = errnoName(error);
  if (errno === 'ENOENT' || errno === 'ENOTDIR') return { ok: false, reason: viaLink ? 'dangling' : 'missing', at };
  if (errno === 'ELOOP') return { ok: false, reason: 'loop', at };
  return { ok: false, reason: 'unreadable', at, errno: errno ?? 'unknown error' };
}

/** The errno name (`ENOENT`, ...) of a file system error, or undefined for anything else. */
export function errnoName(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
