// No `node:` import here: the reader runs over a folder (read/node.ts supplies node:fs and the
// descriptor checks) and over an in-memory tree (read/tree.ts), in Node and in a browser.
import { isDotGit } from '@agentproto/archive';
import { type Finding, type Severity, findingFrom } from '../findings.js';
import { byteOrder } from '../text.js';
import { READ_FINDING_CODES, type ReadFindingCode } from './codes.js';
import {
  type AbsoluteTargets,
  type PackageDirent,
  type PackageFileHandle,
  type PackageFs,
  type PackageStats,
  type ResolveFailure,
  errnoName,
  packagePathSegments,
  resolveEntry,
} from './resolve.js';

/**
 * What a client disables when a package path fails, narrowest last:
 * one file, one MCP server entry, one skill, all MCP servers, all skills, the plugin.
 */
export type FailureScope = 'file' | 'mcp-server' | 'skill' | 'mcp' | 'skills' | 'plugin';

/**
 * How a path is used. `package`: a file or folder of the package (the default).
 * `mcp-server`: an MCP server's `command` or `cwd`, whose failure invalidates that entry only.
 */
export type PathUse = 'package' | 'mcp-server';

export interface FailureBoundary {
  scope: FailureScope;
  /** The package paths it covers: `*` is one segment, `**` any path, `''` the plugin root. */
  paths: readonly string[];
  /** Set when the boundary depends on how the path is used rather than where it is. */
  use?: PathUse;
  severity: Severity;
  /** The spec sections it comes from. */
  section: string;
  /** What a conformant client does. */
  effect: string;
}

/**
 * The failure boundaries of §4.1 ("the client MUST apply the narrowest applicable failure
 * boundary"), narrowest first; a failure takes the first row that covers it. A row is
 * matched against the part of the path that failed, not the whole path asked for: when
 * `skills` is a link leaving the root, reading `skills/a/SKILL.md` fails at `skills`, which
 * invalidates the skills component type (§4.1 item 2), not only skill `a`. The last row is
 * §4.1 item 5's "any other package path": only that path is denied, the rest still loads,
 * so it is the one boundary reported as a warning.
 */
export const FAILURE_BOUNDARIES: readonly FailureBoundary[] = Object.freeze([
  {
    scope: 'mcp-server',
    paths: ['**'],
    use: 'mcp-server',
    severity: 'error',
    section: '§4.1 item 4, §7.2.2',
    effect: 'the server entry is invalid and skipped; other servers and components still load',
  },
  {
    scope: 'skill',
    paths: ['skills/*', 'skills/*/SKILL.md'],
    severity: 'error',
    section: '§4.1 item 3, §7.1',
    effect: 'the skill is skipped; other skills and components still load',
  },
  {
    scope: 'mcp',
    paths: ['mcp.json'],
    severity: 'error',
    section: '§4.1 item 2, §6.2, §7.2.2',
    effect: 'MCP is disabled for the plugin; skills still load',
  },
  {
    scope: 'skills',
    paths: ['skills'],
    severity: 'error',
    section: '§4.1 item 2, §6.2',
    effect: 'the skills component type is invalid; MCP still loads',
  },
  {
    scope: 'plugin',
    paths: ['', 'plugin.json'],
    severity: 'error',
    section: '§4.1 items 1-2, §5.1',
    effect: 'the plugin is rejected: none of its components is discovered or executed',
  },
  {
    scope: 'file',
    paths: ['**'],
    severity: 'warning',
    section: '§4.1 item 5',
    effect: 'access to that path is denied; everything else still loads',
  },
] as const satisfies readonly FailureBoundary[]);

/** The boundary a failure at package path `at` falls under (`''` is the plugin root). */
export function failureBoundary(at: string, use: PathUse = 'package'): FailureBoundary {
  const segments = packagePathSegments(at) ?? [at];
  const found = FAILURE_BOUNDARIES.find(
    (b) => (b.use === undefined || b.use === use) && b.paths.some((p) => matches(p, segments)),
  );
  // The last row covers every path, so this is never reached.
  return found ?? (FAILURE_BOUNDARIES[FAILURE_BOUNDARIES.length - 1] as FailureBoundary);
}

function matches(pattern: string, segments: readonly string[]): boolean {
  if (pattern === '**') return true;
  const parts = pattern === '' ? [] : pattern.split('/');
  return parts.length === segments.length && parts.every((p, i) => p === '*' || p === segments[i]);
}

export interface ReadFailure {
  ok: false;
  absent: false;
  /** The path asked for, normalized (no `./`, no empty segments). */
  path: string;
  finding: Finding;
  /** What the caller disables, from FAILURE_BOUNDARIES. */
  scope: FailureScope;
}

/** Nothing exists at the path and no link points there: not an error by itself (§6.2). */
interface ReadAbsent {
  ok: false;
  absent: true;
  path: string;
}

export type ReadFileResult =
  | {
      ok: true;
      path: string;
      realPath: string;
      bytes: Uint8Array;
      /** The mode of the very descriptor the bytes were read through (its executable bits). */
      mode: number;
    }
  | ReadAbsent
  | ReadFailure;

/**
 * A package path as a listing of the reader found it: `realPath` is the listed folder's real
 * path and the entry's name, and the listing saw a regular file or a folder there, not a link.
 * The reader opens it there at once (never following a link, the descriptor proven inside the
 * root); if that open fails it resolves `path` from the root instead, as for any path.
 */
export interface ListedPath {
  path: string;
  realPath: string;
}

interface PackageDirEntry {
  name: string;
  /** The entry itself, links not followed: resolve `dir/name` to learn where a link leads. */
  kind: 'file' | 'directory' | 'link' | 'other';
}

type ListResult = { ok: true; path: string; realPath: string; entries: PackageDirEntry[] } | ReadAbsent | ReadFailure;

type ResolvePathResult =
  | { ok: true; path: string; realPath: string; kind: 'file' | 'directory' | 'other' }
  | ReadAbsent
  | ReadFailure;

/** The size limits of a package read, wherever it is read from. */
export interface PackageReadLimits {
  /** Bytes one file may hold; a larger file is refused (a finding) before it is read. Default 10 MiB. */
  maxFileBytes?: number;
  /** Bytes the files read together may hold; past it the package is rejected (AR9O5). Default 256 MiB. */
  maxPackageBytes?: number;
}

/** How validatePlugin, importPlugin and the package reader read a folder: size limits and the file system. */
export interface PluginReaderOptions extends PackageReadLimits {
  /** The file system to read through (a host's own, an in-memory one). Default: node:fs/promises. */
  fs?: PackageFs;
}

/**
 * What the reader needs of the platform it runs on, beside a PackageFs: read/node.ts gives
 * node:fs's open flags, synchronous calls for listed entries and the kernel's answer on where
 * a descriptor is; an in-memory tree needs none of them.
 */
export interface ReaderPlatform {
  fs: PackageFs;
  /** Flags to open a file with: read only, never following a link, never blocking. */
  fileFlags: number;
  /** The same for a folder. */
  directoryFlags: number;
  /** Where an absolute link target may lead (resolveEntry). */
  absoluteTargets: AbsoluteTargets;
  /** Opens a listed entry at once, without the file system's thread pool (node:fs itself only). */
  openNow?: (realPath: string, flags: number) => PackageFileHandle;
  /** Lists a folder at once, for openNow's folders. */
  readdirNow?: (path: string) => PackageDirent[];
  /** Whether the descriptor `fd` is `opened`, inside `realRoot` (the kernel's answer). */
  descriptorIsInside?: (fd: number, realRoot: string, opened: string) => boolean;
  /** A path naming the descriptor `fd` itself, when the platform has one (Linux: /proc/self/fd). */
  descriptorPath?: (fd: number) => string | undefined;
}

export interface PluginReader {
  /** The bytes of a regular file inside the plugin root. */
  readFile(relPath: string | ListedPath, options?: { use?: PathUse }): Promise<ReadFileResult>;
  /**
   * readFile of each of `paths`, taken by index in order: the reads run up to READ_AHEAD
   * files ahead of the one taken, but a result counts (its finding, its bytes against the
   * package limit) only when it is taken, so a caller that takes them in order, and skips
   * some, gets exactly what readFile one at a time gives. Bytes read ahead stay within the
   * package limit together with those taken; a file they would not fit is read when taken.
   */
  readAhead(paths: readonly (string | ListedPath)[]): (index: number) => Promise<ReadFileResult>;
  /** The entries of a folder inside the plugin root, sorted by name in byte order. */
  list(relDir: string | ListedPath, options?: { use?: PathUse }): Promise<ListResult>;
  /** Where a path leads, checked for containment but not read (an MCP command or cwd). */
  resolve(relPath: string, options?: { use?: PathUse }): Promise<ResolvePathResult>;
  /** Every finding so far, once per path and code, in the order they occurred. */
  readonly findings: readonly Finding[];
  /** Bytes read so far, each file counted once however often it is read. */
  readonly bytesRead: number;
}

export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** How many reads run ahead of the one taken (readAhead): enough to keep the file system's threads busy. */
const READ_AHEAD = 16;
export const DEFAULT_MAX_PACKAGE_BYTES = 256 * 1024 * 1024;

const RESOLVE_CODES: Readonly<Record<Exclude<ResolveFailure['reason'], 'missing'>, ReadFindingCode>> = {
  'invalid-path': 'read.path-invalid',
  'outside-root': 'read.outside-root',
  loop: 'read.link-loop',
  'too-many-hops': 'read.too-many-links',
  dangling: 'read.link-dangling',
  'not-directory': 'read.not-directory',
  unreadable: 'read.unreadable',
};

const RESOLVE_MESSAGES: Readonly<Record<Exclude<ResolveFailure['reason'], 'missing'>, string>> = {
  'invalid-path': 'is not a package path: it is absolute or holds "..", a backslash, NUL or a drive letter',
  'outside-root': 'resolves outside the plugin root',
  loop: 'goes through a link that leads back to itself',
  'too-many-hops': 'follows more than 40 links',
  dangling: 'goes through a link that points at nothing',
  'not-directory': 'the plugin root is not a directory',
  unreadable: 'cannot be read',
};

/** A failure found but not yet reported: readAhead reports it only when its read is taken. */
interface Refusal {
  ok: false;
  absent: false;
  refused: { path: string; code: ReadFindingCode; at: string; use: PathUse; message: string };
}

/**
 * A file read but not yet counted (`bytes`, of `reserved` bytes held against the package
 * limit until it is), or one left to read when taken (`later`: read ahead, it would not fit).
 */
type Fetched =
  | { ok: true; path: string; realPath: string; bytes: Uint8Array; mode: number; reserved: number }
  | { ok: false; later: true }
  | ReadAbsent
  | Refusal;

const refusal = (path: string, code: ReadFindingCode, at: string, use: PathUse, message: string): Refusal => ({
  ok: false,
  absent: false,
  refused: { path, code, at, use, message },
});

/**
 * A reader for the plugin directory at `root` that reads it as a conformant client must:
 * every path is resolved inside the root one component at a time (resolveInside), only
 * regular files are read, and a file is measured before any of its bytes are read. A failure
 * never throws; it is returned with its finding and the scope a client disables (§4.1), and
 * kept in `findings`. `root` is absolute on `platform.fs`.
 */
export function createPluginReader(root: string, limits: PackageReadLimits, platform: ReaderPlatform): PluginReader {
  const maxFileBytes = limits.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxPackageBytes = limits.maxPackageBytes ?? DEFAULT_MAX_PACKAGE_BYTES;
  const fs = remembersFolders(platform.fs);
  const OPEN_FLAGS = platform.fileFlags;
  const DIRECTORY_FLAGS = platform.directoryFlags;
  // Entries a listing found are opened, measured, read and listed with node:fs's synchronous
  // calls when the reader uses node:fs itself: each is a few system calls on a name just
  // listed, cheaper than a round trip to the thread pool per call. A host's own fs is awaited.
  const { openNow, readdirNow } = platform;
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const counted = new Map<string, number>();
  let bytesRead = 0;
  /** Bytes of files read ahead and not taken yet: with bytesRead, never over maxPackageBytes. */
  let reserved = 0;
  let packageFailure: ReadFailure | undefined;

  function fail(path: string, code: ReadFindingCode, at: string, use: PathUse, message: string): ReadFailure {
    // A .git path of the package is denied on its own wherever it sits (never a skill or the
    // skills tree): it is never part of the package, so it disables nothing else. An MCP
    // server pointing into one still loses that server entry.
    const gitOnly = code === 'read.git-metadata' && use === 'package';
    const boundary =
      code === 'read.package-too-large'
        ? failureBoundary('')
        : gitOnly
          ? (FAILURE_BOUNDARIES[FAILURE_BOUNDARIES.length - 1] as FailureBoundary)
          : failureBoundary(at, use);
    const found: Finding = { ...findingFrom(READ_FINDING_CODES, code, path, message), severity: boundary.severity };
    const key = `${code}\0${path}`;
    if (!seen.has(key)) {
      seen.add(key);
      findings.push(found);
    }
    return { ok: false, absent: false, path, finding: found, scope: boundary.scope };
  }

  const report = ({ refused: r }: Refusal): ReadFailure => fail(r.path, r.code, r.at, r.use, r.message);

  async function locate(
    relPath: string,
    use: PathUse,
  ): Promise<{ ok: true; path: string; realPath: string; stats: PackageStats } | ReadAbsent | Refusal> {
    const segments = packagePathSegments(relPath);
    const path = segments === undefined ? relPath : segments.join('/');
    // Refused before anything is touched: a .git folder or gitfile (any spelling git refuses)
    // is never read, so it can never be imported, pulled or shipped.
    const gitAt = segments?.findIndex(isDotGit) ?? -1;
    if (segments !== undefined && gitAt >= 0) {
      return refusal(
        path,
        'read.git-metadata',
        segments.slice(0, gitAt + 1).join('/'),
        use,
        'is a .git entry (in a spelling git itself refuses), never part of a package',
      );
    }
    const resolved = await resolveEntry(root, relPath, fs, platform.absoluteTargets);
    if (resolved.ok) return { ...resolved, path };
    if (resolved.reason === 'missing') return { ok: false, absent: true, path };
    const where =
      resolved.at === path || resolved.reason === 'invalid-path'
        ? ''
        : ` at ${resolved.at === '' ? 'the plugin root' : resolved.at}`;
    const errno = resolved.errno === undefined ? '' : ` (${resolved.errno})`;
    return refusal(
      path,
      RESOLVE_CODES[resolved.reason],
      resolved.at,
      use,
      `${RESOLVE_MESSAGES[resolved.reason]}${where}${errno}`,
    );
  }

  async function readFile(
    target: string | ListedPath,
    { use = 'package' }: { use?: PathUse } = {},
  ): Promise<ReadFileResult> {
    if (packageFailure !== undefined) return packageFailure;
    return settle(await fetchFile(target, use, false), target, use);
  }

  function readAhead(paths: readonly (string | ListedPath)[]): (index: number) => Promise<ReadFileResult> {
    const started: Promise<Fetched>[] = [];
    return async (index) => {
      for (let next = started.length; next < Math.min(paths.length, index + READ_AHEAD); next += 1) {
        const pending = fetchFile(paths[next] as string | ListedPath, 'package', true);
        // Taken later, or never once the caller stops early: not unhandled.
        pending.catch(() => undefined);
        started.push(pending);
      }
      const fetched = await (started[index] as Promise<Fetched>);
      return settle(fetched, paths[index] as string | ListedPath, 'package');
    };
  }

  /**
   * What readFile returns for a fetched file, now counted: the failure reported, the bytes
   * added to the package's total (the package rejected when they take it over the limit).
   */
  async function settle(fetched: Fetched, target: string | ListedPath, use: PathUse): Promise<ReadFileResult> {
    if (fetched.ok) reserved -= fetched.reserved;
    if (packageFailure !== undefined) return packageFailure;
    if (!fetched.ok) {
      if ('later' in fetched) return readFile(target, { use });
      if (fetched.absent) return fetched;
      const failure = report(fetched);
      if (fetched.refused.code === 'read.package-too-large') packageFailure = failure;
      return failure;
    }
    const { path, realPath, bytes, mode } = fetched;
    const previously = counted.get(realPath) ?? 0;
    if (bytesRead - previously + bytes.length > maxPackageBytes) {
      packageFailure = fail(
        path,
        'read.package-too-large',
        path,
        use,
        `brings the package over the limit of ${maxPackageBytes} bytes`,
      );
      return packageFailure;
    }
    bytesRead += bytes.length - previously;
    counted.set(realPath, bytes.length);
    return { ok: true, path, realPath, bytes, mode };
  }

  /**
   * The bytes of a regular file, nothing counted or reported yet (settle does that). Read
   * `ahead`, a file is read only when it fits the package limit beside every file read
   * before it, taken or not; otherwise it is left for settle to read when it is taken.
   */
  async function fetchFile(target: string | ListedPath, use: PathUse, ahead: boolean): Promise<Fetched> {
    let path: string;
    let realPath: string;
    let handle: PackageFileHandle;
    /** What resolving the path found there, when it was resolved (not opened where a listing saw it). */
    let checked: PackageStats | undefined;
    const listed = typeof target === 'string' ? undefined : await openListed(target, OPEN_FLAGS);
    if (listed !== undefined) ({ path, realPath, handle } = listed);
    else {
      const located = await locate(typeof target === 'string' ? target : target.path, use);
      if (!located.ok) return located;
      ({ path, realPath, stats: checked } = located);
      if (!checked.isFile())
        return refusal(path, 'read.not-regular-file', path, use, `is ${kindName(checked)}, not a regular file`);
      try {
        handle = await fs.open(realPath, OPEN_FLAGS);
      } catch (error) {
        return refusal(path, 'read.unreadable', path, use, `cannot be opened (${errnoOf(error)})`);
      }
    }
    let held = 0;
    try {
      const opened = await handle.stat();
      // The entry opened is a regular file, and the one checked when the path was resolved:
      // it was not replaced in between. And the descriptor itself is inside the root: a
      // folder on the way swapped for a link after it was checked (or listed) would otherwise
      // lead the open (and this comparison) to an outside file. Nothing is read before all hold.
      if (
        !opened.isFile() ||
        (checked !== undefined && (opened.dev !== checked.dev || opened.ino !== checked.ino)) ||
        !(await provenInside(handle, realPath))
      ) {
        return refusal(path, 'read.unreadable', path, use, 'changed while it was being read');
      }
      if (opened.size > maxFileBytes) {
        return refusal(
          path,
          'read.file-too-large',
          path,
          use,
          `is ${opened.size} bytes, over the limit of ${maxFileBytes}`,
        );
      }
      if (ahead) {
        if (packageFailure !== undefined || bytesRead + reserved + opened.size > maxPackageBytes)
          return { ok: false, later: true };
        held = opened.size;
        reserved += held;
      } else if (bytesRead - (counted.get(realPath) ?? 0) + opened.size > maxPackageBytes) {
        return refusal(
          path,
          'read.package-too-large',
          path,
          use,
          `brings the package over the limit of ${maxPackageBytes} bytes`,
        );
      }
      // One byte more than the size: reading it means the file grew after it was measured.
      // Never more than the cap plus one, whatever the file does meanwhile.
      const buffer = new Uint8Array(opened.size + 1);
      let filled = 0;
      while (filled < buffer.length) {
        const wanted = buffer.length - filled;
        const { bytesRead: n } = await handle.read(buffer, filled, wanted, filled);
        if (n === 0) break;
        filled += n;
        // A kernel descriptor of a regular file reads short only at the file's end: the byte
        // past the measured size was asked for and is not there, so no second read to see it.
        if (n < wanted && filled === opened.size && typeof handle.fd === 'number') break;
      }
      if (filled !== opened.size) {
        if (filled > maxFileBytes)
          return refusal(
            path,
            'read.file-too-large',
            path,
            use,
            `grew over the limit of ${maxFileBytes} bytes while it was being read`,
          );
        return refusal(path, 'read.unreadable', path, use, 'changed size while it was being read');
      }
      const result: Fetched = {
        ok: true,
        path,
        realPath,
        bytes: buffer.subarray(0, filled),
        mode: opened.mode,
        reserved: held,
      };
      held = 0;
      return result;
    } catch (error) {
      return refusal(path, 'read.unreadable', path, use, `cannot be read (${errnoOf(error)})`);
    } finally {
      reserved -= held;
      await handle.close().catch(() => undefined);
    }
  }

  /**
   * A listed path opened where its listing saw it, never following a link there; undefined
   * when it is not to be opened so (a .git path, refused by locate) or the open fails (it was
   * replaced, or removed, since): the caller then resolves the path from the root.
   */
  async function openListed(
    listed: ListedPath,
    flags: number,
  ): Promise<{ path: string; realPath: string; handle: PackageFileHandle } | undefined> {
    const segments = packagePathSegments(listed.path);
    if (segments === undefined || segments.length === 0 || segments.some(isDotGit)) return undefined;
    let handle: PackageFileHandle;
    try {
      handle = openNow !== undefined ? openNow(listed.realPath, flags) : await fs.open(listed.realPath, flags);
    } catch {
      return undefined;
    }
    // Only a descriptor can be proven inside: a host's own PackageFs resolves every path.
    if (typeof handle.fd === 'number') return { path: segments.join('/'), realPath: listed.realPath, handle };
    await handle.close().catch(() => undefined);
    return undefined;
  }

  async function list(target: string | ListedPath, { use = 'package' }: { use?: PathUse } = {}): Promise<ListResult> {
    if (packageFailure !== undefined) return packageFailure;
    if (typeof target !== 'string') {
      const listed = await listListed(target);
      if (listed !== undefined) return listed;
    }
    const relDir = typeof target === 'string' ? target : target.path;
    const located = await locate(relDir, use);
    if (!located.ok) return located.absent ? located : report(located);
    const { path, realPath, stats } = located;
    if (!stats.isDirectory())
      return fail(path, 'read.not-directory', path, use, `is ${kindName(stats)}, not a directory`);
    try {
      const dirents = await listProven(realPath);
      if (dirents === undefined) return fail(path, 'read.unreadable', path, use, 'changed while it was being listed');
      return { ok: true, path, realPath, entries: entriesOf(dirents) };
    } catch (error) {
      return fail(path, 'read.unreadable', path, use, `cannot be listed (${errnoOf(error)})`);
    }
  }

  /**
   * A listed folder listed where its listing saw it: opened as a folder without following a
   * link, proven inside, listed through its descriptor. Undefined for anything else, which
   * list then resolves from the root and reports as for any path.
   */
  async function listListed(listed: ListedPath): Promise<ListResult | undefined> {
    const opened = await openListed(listed, DIRECTORY_FLAGS);
    if (opened === undefined) return undefined;
    const { path, realPath, handle } = opened;
    try {
      if (!(await provenInside(handle, realPath))) return undefined;
      const here = platform.descriptorPath?.(handle.fd as number) ?? realPath;
      const dirents = readdirNow !== undefined ? readdirNow(here) : await fs.readdir(here, { withFileTypes: true });
      return { ok: true, path, realPath, entries: entriesOf(dirents) };
    } catch {
      return undefined;
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  /**
   * Whether an open handle is inside the root's real path. A handle of node:fs (or one that
   * exposes its descriptor) is proven by the kernel's answer (fs-inside descriptorIsInside);
   * a host's own PackageFs without descriptors keeps its own guarantees.
   */
  async function provenInside(handle: PackageFileHandle, opened: string): Promise<boolean> {
    if (typeof handle.fd !== 'number' || platform.descriptorIsInside === undefined) return true;
    return platform.descriptorIsInside(handle.fd, await fs.realpath(root), opened);
  }

  /**
   * The entries of a folder, listed through a descriptor proven inside the root where the
   * platform names one (Linux), so the names are those of the folder checked, never of one a
   * swapped link led to; undefined when the folder opened is not inside.
   */
  async function listProven(realPath: string): Promise<PackageDirent[] | undefined> {
    let handle: PackageFileHandle;
    try {
      handle = await fs.open(realPath, DIRECTORY_FLAGS);
    } catch (error) {
      // A system error (ELOOP: the folder became a link since it was checked) is the
      // listing's failure. Only a host's PackageFs that cannot open folders lists by name.
      if (errnoName(error) !== undefined) throw error;
      return fs.readdir(realPath, { withFileTypes: true });
    }
    try {
      if (!(await provenInside(handle, realPath))) return undefined;
      const here = typeof handle.fd === 'number' ? platform.descriptorPath?.(handle.fd) : undefined;
      return await fs.readdir(here ?? realPath, { withFileTypes: true });
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  async function resolve(relPath: string, { use = 'package' }: { use?: PathUse } = {}): Promise<ResolvePathResult> {
    if (packageFailure !== undefined) return packageFailure;
    const located = await locate(relPath, use);
    if (!located.ok) return located.absent ? located : report(located);
    const kind = located.stats.isFile() ? 'file' : located.stats.isDirectory() ? 'directory' : 'other';
    return { ok: true, path: located.path, realPath: located.realPath, kind };
  }

  return {
    readFile,
    readAhead,
    list,
    resolve,
    findings,
    get bytesRead() {
      return bytesRead;
    },
  };
}

/** A listing's entries, sorted by name in byte order (UTF-8 bytes, so code points). */
function entriesOf(dirents: readonly PackageDirent[]): PackageDirEntry[] {
  return dirents
    .map(
      (d): PackageDirEntry => ({
        name: d.name,
        kind: d.isSymbolicLink() ? 'link' : d.isDirectory() ? 'directory' : d.isFile() ? 'file' : 'other',
      }),
    )
    .sort((a, b) => byteOrder(a.name, b.name));
}

function kindName(stats: PackageStats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function errnoOf(error: unknown): string {
  return errnoName(error) ?? 'unknown error';
}

/**
 * The reader's file system, remembering what it learned about folders: the root's real path
 * and the lstat of every folder met. Reading a package resolves each path one component at
 * a time, so without this every file would lstat each of its parent folders again (about
 * eight calls per file). Files and links are asked afresh every time: a file is what a read
 * opens (and checks against what it opened), and a link's target is read when it is met.
 * A folder that turns into a link while the package is being read is not seen as one; the
 * open of the file at the end still never follows a link, and the reader lives for one
 * load of one package.
 */
function remembersFolders(fs: PackageFs): PackageFs {
  const realPaths = new Map<string, Promise<string>>();
  const folders = new Map<string, PackageStats>();
  return {
    ...fs,
    realpath(path) {
      let known = realPaths.get(path);
      if (!known) {
        known = fs.realpath(path);
        realPaths.set(path, known);
        known.catch(() => realPaths.delete(path));
      }
      return known;
    },
    async lstat(path) {
      const known = folders.get(path);
      if (known) return known;
      const stats = await fs.lstat(path);
      if (stats.isDirectory()) folders.set(path, stats);
      return stats;
    },
  };
}
