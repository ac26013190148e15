import { constants, type Dirent, type Stats } from 'node:fs';
import { isDotGit } from '@agentproto/archive';
import { descriptorIsInside, descriptorPath } from '@agentproto/fs-inside';
import { type Finding, type Severity, findingFrom } from '../findings.js';
import { READ_FINDING_CODES, type ReadFindingCode } from './codes.js';
import {
  type PackageFileHandle,
  type PackageFs,
  type ResolveFailure,
  nodePackageFs,
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

export type ReadFileResult = { ok: true; path: string; realPath: string; bytes: Uint8Array } | ReadAbsent | ReadFailure;

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

/** How validatePlugin, importPlugin and the package reader read a folder: size limits and the file system. */
export interface PluginReaderOptions {
  /** Bytes one file may hold; a larger file is refused (a finding) before it is read. Default 10 MiB. */
  maxFileBytes?: number;
  /** Bytes the files read together may hold; past it the package is rejected (AR9O5). Default 256 MiB. */
  maxPackageBytes?: number;
  /** The file system to read through (a host's own, an in-memory one). Default: node:fs/promises. */
  fs?: PackageFs;
}

export interface PluginReader {
  /** The bytes of a regular file inside the plugin root. */
  readFile(relPath: string, options?: { use?: PathUse }): Promise<ReadFileResult>;
  /** The entries of a folder inside the plugin root, sorted by name in byte order. */
  list(relDir: string, options?: { use?: PathUse }): Promise<ListResult>;
  /** Where a path leads, checked for containment but not read (an MCP command or cwd). */
  resolve(relPath: string, options?: { use?: PathUse }): Promise<ResolvePathResult>;
  /** Every finding so far, once per path and code, in the order they occurred. */
  readonly findings: readonly Finding[];
  /** Bytes read so far, each file counted once however often it is read. */
  readonly bytesRead: number;
}

const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_MAX_PACKAGE_BYTES = 256 * 1024 * 1024;

// O_NONBLOCK: a file swapped for a pipe after it was checked must not block the open.
// O_NOFOLLOW: nor may a file swapped for a link be followed.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const DIRECTORY_FLAGS = OPEN_FLAGS | (constants.O_DIRECTORY ?? 0);

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

/**
 * A reader for the plugin directory at `root` that reads it as a conformant client must:
 * every path is resolved inside the root one component at a time (resolveInside), only
 * regular files are read, and a file is measured before any of its bytes are read. A failure
 * never throws; it is returned with its finding and the scope a client disables (§4.1), and
 * kept in `findings`.
 */
export function openPluginReader(root: string, options: PluginReaderOptions = {}): PluginReader {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxPackageBytes = options.maxPackageBytes ?? DEFAULT_MAX_PACKAGE_BYTES;
  const fs = remembersFolders(options.fs ?? nodePackageFs);
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const counted = new Map<string, number>();
  let bytesRead = 0;
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

  async function locate(
    relPath: string,
    use: PathUse,
  ): Promise<{ ok: true; path: string; realPath: string; stats: Stats } | ReadAbsent | ReadFailure> {
    const segments = packagePathSegments(relPath);
    const path = segments === undefined ? relPath : segments.join('/');
    // Refused before anything is touched: a .git folder or gitfile (any spelling git refuses)
    // is never read, so it can never be imported, pulled or shipped.
    const gitAt = segments?.findIndex(isDotGit) ?? -1;
    if (segments !== undefined && gitAt >= 0) {
      return fail(
        path,
        'read.git-metadata',
        segments.slice(0, gitAt + 1).join('/'),
        use,
        'is a .git entry (in a spelling git itself refuses), never part of a package',
      );
    }
    const resolved = await resolveEntry(root, relPath, fs);
    if (resolved.ok) return { ...resolved, path };
    if (resolved.reason === 'missing') return { ok: false, absent: true, path };
    const where =
      resolved.at === path || resolved.reason === 'invalid-path'
        ? ''
        : ` at ${resolved.at === '' ? 'the plugin root' : resolved.at}`;
    const errno = resolved.errno === undefined ? '' : ` (${resolved.errno})`;
    return fail(
      path,
      RESOLVE_CODES[resolved.reason],
      resolved.at,
      use,
      `${RESOLVE_MESSAGES[resolved.reason]}${where}${errno}`,
    );
  }

  async function readFile(relPath: string, { use = 'package' }: { use?: PathUse } = {}): Promise<ReadFileResult> {
    if (packageFailure !== undefined) return packageFailure;
    const located = await locate(relPath, use);
    if (!located.ok) return located;
    const { path, realPath, stats } = located;
    if (!stats.isFile())
      return fail(path, 'read.not-regular-file', path, use, `is ${kindName(stats)}, not a regular file`);

    let handle;
    try {
      handle = await fs.open(realPath, OPEN_FLAGS);
    } catch (error) {
      return fail(path, 'read.unreadable', path, use, `cannot be opened (${errnoOf(error)})`);
    }
    try {
      const opened = await handle.stat();
      // The entry checked is the entry opened: it was not replaced in between. And the
      // descriptor itself is inside the root: a folder on the way swapped for a link after
      // it was checked would otherwise lead the open (and this comparison) to an outside
      // file. Nothing is read before both hold.
      if (
        !opened.isFile() ||
        opened.dev !== stats.dev ||
        opened.ino !== stats.ino ||
        !(await provenInside(handle, realPath))
      ) {
        return fail(path, 'read.unreadable', path, use, 'changed while it was being read');
      }
      if (opened.size > maxFileBytes) {
        return fail(
          path,
          'read.file-too-large',
          path,
          use,
          `is ${opened.size} bytes, over the limit of ${maxFileBytes}`,
        );
      }
      const previously = counted.get(realPath) ?? 0;
      if (bytesRead - previously + opened.size > maxPackageBytes) {
        packageFailure = fail(
          path,
          'read.package-too-large',
          path,
          use,
          `brings the package over the limit of ${maxPackageBytes} bytes`,
        );
        return packageFailure;
      }
      // One byte more than the size: reading it means the file grew after it was measured.
      // Never more than the cap plus one, whatever the file does meanwhile.
      const buffer = new Uint8Array(opened.size + 1);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead: n } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (n === 0) break;
        filled += n;
      }
      if (filled !== opened.size) {
        if (filled > maxFileBytes)
          return fail(
            path,
            'read.file-too-large',
            path,
            use,
            `grew over the limit of ${maxFileBytes} bytes while it was being read`,
          );
        return fail(path, 'read.unreadable', path, use, 'changed size while it was being read');
      }
      bytesRead += filled - previously;
      counted.set(realPath, filled);
      return { ok: true, path, realPath, bytes: buffer.subarray(0, filled) };
    } catch (error) {
      return fail(path, 'read.unreadable', path, use, `cannot be read (${errnoOf(error)})`);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  async function list(relDir: string, { use = 'package' }: { use?: PathUse } = {}): Promise<ListResult> {
    if (packageFailure !== undefined) return packageFailure;
    const located = await locate(relDir, use);
    if (!located.ok) return located;
    const { path, realPath, stats } = located;
    if (!stats.isDirectory())
      return fail(path, 'read.not-directory', path, use, `is ${kindName(stats)}, not a directory`);
    try {
      const dirents = await listProven(realPath);
      if (dirents === undefined) return fail(path, 'read.unreadable', path, use, 'changed while it was being listed');
      const entries = dirents
        .map(
          (d): PackageDirEntry => ({
            name: d.name,
            kind: d.isSymbolicLink() ? 'link' : d.isDirectory() ? 'directory' : d.isFile() ? 'file' : 'other',
          }),
        )
        .sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
      return { ok: true, path, realPath, entries };
    } catch (error) {
      return fail(path, 'read.unreadable', path, use, `cannot be listed (${errnoOf(error)})`);
    }
  }

  /**
   * Whether an open handle is inside the root's real path. A handle of node:fs (or one that
   * exposes its descriptor) is proven by the kernel's answer (fs-inside descriptorIsInside);
   * a host's own PackageFs without descriptors keeps its own guarantees.
   */
  async function provenInside(handle: PackageFileHandle, opened: string): Promise<boolean> {
    if (typeof handle.fd !== 'number') return true;
    return descriptorIsInside(handle.fd, await fs.realpath(root), opened);
  }

  /**
   * The entries of a folder, listed through a descriptor proven inside the root where the
   * platform names one (Linux), so the names are those of the folder checked, never of one a
   * swapped link led to; undefined when the folder opened is not inside.
   */
  async function listProven(realPath: string): Promise<Dirent[] | undefined> {
    let handle: PackageFileHandle;
    try {
      handle = await fs.open(realPath, DIRECTORY_FLAGS);
    } catch (error) {
      // A system error (ELOOP: the folder became a link since it was checked) is the
      // listing's failure. Only a host's PackageFs that cannot open folders lists by name.
      if (typeof (error as NodeJS.ErrnoException | undefined)?.code === 'string') throw error;
      return fs.readdir(realPath, { withFileTypes: true });
    }
    try {
      if (!(await provenInside(handle, realPath))) return undefined;
      const here = typeof handle.fd === 'number' ? descriptorPath(handle.fd) : undefined;
      return await fs.readdir(here ?? realPath, { withFileTypes: true });
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  async function resolve(relPath: string, { use = 'package' }: { use?: PathUse } = {}): Promise<ResolvePathResult> {
    if (packageFailure !== undefined) return packageFailure;
    const located = await locate(relPath, use);
    if (!located.ok) return located;
    const kind = located.stats.isFile() ? 'file' : located.stats.isDirectory() ? 'directory' : 'other';
    return { ok: true, path: located.path, realPath: located.realPath, kind };
  }

  return {
    readFile,
    list,
    resolve,
    findings,
    get bytesRead() {
      return bytesRead;
    },
  };
}

function kindName(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown error';
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
  const folders = new Map<string, Stats>();
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
