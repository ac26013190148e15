import * as fs from 'node:fs';
import { constants } from 'node:fs';

/**
 * Reading a folder someone else can write, without ever reading outside it.
 *
 * "Resolve the path, check it is inside, then open it by name" is a race: between the check
 * and the open, the owner of the folder can swap one of its folders for a link to anywhere
 * (`renameat2(RENAME_EXCHANGE)` in a loop), and the open then reads a host file. So the
 * order here is the other way round: open first, then prove that the open descriptor is
 * inside, and read only through that descriptor. On Linux the proof is where the kernel
 * says the descriptor is (`readlink /proc/self/fd/N`), one system call per file; folders
 * are listed and their entries measured through the folder's own descriptor
 * (`/proc/self/fd/N/` is that very folder, whatever its name now leads to), so a listing is
 * of the folder that was proven, never of whatever the name points at a moment later.
 *
 * Elsewhere (no /proc) the proof is the portable one: after opening, the name is resolved
 * again, must be inside, and must name the same file (device and inode) as the descriptor.
 * That closes the swap that leaves a link in place, but an owner who swaps twice (out for
 * the open, back for the check) can still win it, and a listing is read by name; hosts that
 * take folders from people they do not trust should run on Linux.
 *
 * What this cannot tell: a hard link inside the folder to a file outside it is, for the
 * kernel, a file inside it. Hosts keep the folders they read on a filesystem without files
 * the host reads but their owners cannot (or keep `fs.protected_hardlinks = 1`, the default
 * of current Linux distributions, which stops anyone from linking a file they cannot read).
 */

/** Why a path was not read. No reason ever carries anything about what was outside. */
export type InsideProblem =
  /** The path (or a link on it) leads out of the root. */
  | 'escapes'
  /** A link loop on the path. */
  | 'loop'
  /** A link on the path points at nothing. */
  | 'dangling'
  /** Neither a file nor a folder (a pipe, a socket, a device). */
  | 'special'
  /** The entry was replaced, or changed size, while it was being read. */
  | 'changed';

const MESSAGES: Readonly<Record<InsideProblem, string>> = {
  escapes: 'leads out of the folder it must stay in',
  loop: 'goes through a link loop',
  dangling: 'goes through a link to nothing',
  special: 'is neither a file nor a folder',
  changed: 'changed while it was being read',
};

/**
 * A path under a root cannot be read safely. `path` is the path relative to the root, as
 * asked for: the message never names, sizes or describes anything outside the root.
 */
export class NotInsideError extends Error {
  readonly code = 'CACHE_NOT_INSIDE';
  /** The path relative to the root, as asked for. */
  readonly path: string;
  readonly reason: InsideProblem;
  constructor(path: string, reason: InsideProblem) {
    super(`${JSON.stringify(path)} ${MESSAGES[reason]}`);
    this.name = new.target.name;
    this.path = path;
    this.reason = reason;
  }
}

/** An open descriptor proven to be inside the root, with what fstat says of it. The caller closes it. */
export interface InsideHandle {
  fd: number;
  stats: fs.Stats;
}

/** A folder opened and proven inside the root, listed and measured through its descriptor. */
export interface InsideDir extends InsideHandle {
  /** The folder's entries (types as the folder holds them: links are not followed). */
  entries(): fs.Dirent[];
  /** lstat of one entry of this very folder; undefined when it is gone. */
  lstat(name: string): fs.Stats | undefined;
  /** The text of a link in this very folder (never followed). */
  readlink(name: string): string;
  close(): void;
}

export interface OpenInsideOptions {
  /**
   * Follow a link at the end of the path (links on the way are always followed; the proof
   * judges where they led). Default true. With false, a link there is `changed`: a caller
   * that listed the entry as a file or folder finds something else.
   */
  follow?: boolean;
}

// O_NONBLOCK: an entry swapped for a pipe must not block the open (nothing is read before
// the descriptor is proven and measured). O_NOCTTY: never acquire a terminal.
const BASE_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;

let procFd: boolean | undefined;

/**
 * The last fs.Stats and fs.Dirent this module made, and the last folder, handle and
 * opener's folder, kept for the life of the process (a few hundred bytes; a descriptor
 * number kept is closed, or about to be). V8 forgets an object shape as soon as no object
 * has it, and with it every optimized function that checks for that shape: a full
 * collection between two reads of a tree (a host bundling a workspace again) left no Stats
 * alive, and the next read compiled `fstatSync`, `Stats`, `isFile` and their callers again
 * (~30 ms of compile a bundle of 2,000 files, on one of this machine's two cores). The last,
 * not the first: a shape V8 has since replaced (a size past its small integers, say) would
 * keep nothing useful.
 */
const keptShapes: {
  stats?: fs.Stats;
  dirent?: fs.Dirent;
  dir?: InsideDir;
  handle?: InsideHandle;
  folder?: HeldFolder;
} = {};

/** Whether `/proc/self/fd` tells where a descriptor is (Linux, with /proc mounted). */
function hasProcFd(): boolean {
  procFd ??= process.platform === 'linux' && fs.existsSync('/proc/self/fd');
  return procFd;
}

/** The real path of a root: the one every proof compares against. Resolve it once, before reading. */
export function realRootOf(root: string): string {
  return fs.realpathSync.native(root);
}

function isUnder(path: string, realRoot: string): boolean {
  if (path === realRoot) return true;
  const prefix =
    realRoot.endsWith('/') || realRoot.endsWith('\\')
      ? realRoot
      : `${realRoot}${process.platform === 'win32' ? '\\' : '/'}`;
  return path.startsWith(prefix);
}

function absoluteOf(realRoot: string, rel: string): string {
  if (rel === '') return realRoot;
  return realRoot.endsWith('/') ? `${realRoot}${rel}` : `${realRoot}/${rel}`;
}

/**
 * Whether an open descriptor is inside `realRoot` now. `opened` is the name it was opened
 * by, used only by the portable proof. On Linux the kernel's own answer: the path of the
 * open file (a file deleted since keeps its old path with " (deleted)" after it, still
 * judged by where it was).
 */
export function descriptorIsInside(fd: number, realRoot: string, opened: string): boolean {
  if (hasProcFd()) {
    try {
      return isUnder(fs.readlinkSync(`/proc/self/fd/${fd}`), realRoot);
    } catch {
      return false;
    }
  }
  try {
    const real = fs.realpathSync.native(opened);
    if (!isUnder(real, realRoot)) return false;
    const named = fs.statSync(real, { bigint: true });
    const open = fs.fstatSync(fd, { bigint: true });
    return named.dev === open.dev && named.ino === open.ino;
  } catch {
    return false;
  }
}

/**
 * A path that names this very descriptor's folder (Linux: `/proc/self/fd/N`), for listing a
 * folder proven inside through an API that takes a path; undefined where there is none.
 */
export function descriptorPath(fd: number): string | undefined {
  return hasProcFd() ? `/proc/self/fd/${fd}` : undefined;
}

/**
 * Opens `rel` (relative to `realRoot`, `/`-separated, already checked to hold no `..` and not
 * to be absolute) and proves the descriptor inside before returning it. A file or a folder;
 * anything else is refused before a byte of it is read. Errors: NotInsideError, or the
 * errno error of the open (ENOENT, EACCES), whose message names the path inside the root.
 */
export function openInside(realRoot: string, rel: string, options: OpenInsideOptions = {}): InsideHandle {
  return openProven(realRoot, rel, BASE_FLAGS | (options.follow === false ? NOFOLLOW : 0), options.follow !== false);
}

function openProven(realRoot: string, rel: string, flags: number, follow: boolean): InsideHandle {
  const abs = absoluteOf(realRoot, rel);
  let fd: number;
  try {
    fd = fs.openSync(abs, flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new NotInsideError(rel, follow ? 'loop' : 'changed');
    // A socket cannot be opened (ENXIO on Linux, EOPNOTSUPP elsewhere): not a file or a folder.
    if (code === 'ENXIO' || code === 'EOPNOTSUPP') throw new NotInsideError(rel, 'special');
    if (
      (code === 'ENOENT' || code === 'ENOTDIR') &&
      follow &&
      rel !== '' &&
      lstatInside(realRoot, rel)?.isSymbolicLink()
    ) {
      throw new NotInsideError(rel, 'dangling');
    }
    throw error;
  }
  // The invariant that keeps outside bytes out: nothing is read from a descriptor that
  // is not proven inside, however the name led to it.
  return measured(fd, rel, descriptorIsInside(fd, realRoot, abs));
}

/**
 * The handle of an open descriptor: refused (`escapes`) unless `inside`, then measured and
 * refused unless a file or a folder. The descriptor is closed on a refusal.
 */
function measured(fd: number, rel: string, inside: boolean): InsideHandle {
  try {
    if (!inside) throw new NotInsideError(rel, 'escapes');
    const stats = fs.fstatSync(fd);
    keptShapes.stats = stats;
    if (!stats.isFile() && !stats.isDirectory()) throw new NotInsideError(rel, 'special');
    const handle = { fd, stats };
    keptShapes.handle = handle;
    return handle;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/**
 * Opens the folder `rel` and proves it inside. Its entries and their lstat come from the
 * descriptor (on Linux), so a listing never shows what a swapped link pointed at: names
 * and sizes of outside files can reach neither a bundle nor an error through it.
 */
export function openDirInside(realRoot: string, rel: string, options: OpenInsideOptions = {}): InsideDir {
  const flags = BASE_FLAGS | DIRECTORY | (options.follow === false ? NOFOLLOW : 0);
  // O_DIRECTORY: a file there fails with ENOTDIR before anything is opened for reading.
  const { fd, stats } = openProven(realRoot, rel, flags, options.follow !== false);
  const dir = new ProvenDir(fd, stats, realRoot, rel, absoluteOf(realRoot, rel));
  keptShapes.dir = dir;
  return dir;
}

/**
 * openDirInside's folder, as methods of a class rather than closures of each folder: a
 * reader calls `lstat` for every file of a tree, and V8 keeps the code it optimized for a
 * closure only while that closure lives, so each tree compiled it again.
 */
class ProvenDir implements InsideDir {
  private readonly here: string;
  private closed = false;

  constructor(
    readonly fd: number,
    readonly stats: fs.Stats,
    private readonly realRoot: string,
    private readonly rel: string,
    private readonly abs: string,
  ) {
    this.here = hasProcFd() ? `/proc/self/fd/${fd}` : abs;
  }

  entries(): fs.Dirent[] {
    const entries = fs.readdirSync(this.here, { withFileTypes: true });
    if (entries.length > 0) keptShapes.dirent = entries[entries.length - 1];
    // Portable proof of the listing: the name must still lead to the folder proven.
    if (!hasProcFd() && !descriptorIsInside(this.fd, this.realRoot, this.abs))
      throw new NotInsideError(this.rel, 'changed');
    return entries;
  }

  lstat(name: string): fs.Stats | undefined {
    return fs.lstatSync(`${this.here}/${name}`, { throwIfNoEntry: false });
  }

  readlink(name: string): string {
    return fs.readlinkSync(`${this.here}/${name}`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

/** Opens files of one folder after another, each through its folder's proven descriptor (see insideOpener). */
export interface InsideOpener {
  /** `openInside(realRoot, rel)`: the same handle, the same refusals. */
  open(rel: string): InsideHandle;
  /** Closes the folder it holds, if any. It also closes it itself at the next turn of the event loop. */
  close(): void;
}

/**
 * Opens the files of a tree the way `openInside` does, for a reader that takes many files
 * of the same folder one after the other (a tree packed in name order). On Linux a file
 * is opened by its name in its folder's descriptor (`/proc/self/fd/N/name`, not following
 * a link there) once the folder itself was opened and proven inside: an entry of a folder
 * inside the root, reached by one name that is not a link, is inside the root, so the file
 * needs no proof of its own. That saves the `readlink` of every file (10,000 files opened,
 * measured and closed: 105-111 ms against 143-155 ms on this machine's VM). Whatever else a name
 * may be (a link to follow, an entry that is gone, a name with `..`), and everywhere
 * without /proc, the file is opened by `openInside`, which proves it or refuses it as it
 * always does.
 *
 * The folder's descriptor is held from the first file of that folder until a file of
 * another folder, `close()`, or the next turn of the event loop, whichever comes first:
 * an opener never keeps a descriptor open while its caller waits.
 */
export function insideOpener(realRoot: string): InsideOpener {
  return new FolderOpener(realRoot);
}

/** A folder an opener holds (see keptShapes). */
interface HeldFolder {
  rel: string;
  fd: number;
  prefix: string;
}

/**
 * insideOpener's opener, as methods of a class rather than closures of each call: a reader
 * calls `open` for every file of a tree, and V8 compiles the reader's loop against the
 * function it calls. A closure made for one tree is another function for the next, and
 * the reader's compiled loop was thrown away at the next tree's first file; a method is
 * the same function for every tree.
 */
class FolderOpener implements InsideOpener {
  private folder: HeldFolder | undefined;
  private closing: NodeJS.Immediate | undefined;

  constructor(private readonly realRoot: string) {}

  open(rel: string): InsideHandle {
    const slash = rel.lastIndexOf('/');
    const name = rel.slice(slash + 1);
    if (!hasProcFd() || name === '' || name === '.' || name === '..') return openInside(this.realRoot, rel);
    const parent = this.folderOf(slash < 0 ? '' : rel.slice(0, slash));
    if (parent === undefined) return openInside(this.realRoot, rel);
    let fd: number;
    try {
      fd = fs.openSync(parent.prefix + name, BASE_FLAGS | NOFOLLOW);
    } catch {
      // A link (ELOOP: followed and proven by openInside), an entry gone or anything else:
      // the usual open, with its proof and its errors.
      return openInside(this.realRoot, rel);
    }
    // Inside: one name, not a link, in a folder proven inside.
    return measured(fd, rel, true);
  }

  close(): void {
    if (this.closing !== undefined) clearImmediate(this.closing);
    this.closing = undefined;
    if (this.folder === undefined) return;
    const { fd } = this.folder;
    this.folder = undefined;
    fs.closeSync(fd);
  }

  private folderOf(rel: string): HeldFolder | undefined {
    if (this.folder?.rel === rel) return this.folder;
    this.close();
    let fd: number;
    try {
      fd = openProven(this.realRoot, rel, BASE_FLAGS | DIRECTORY, true).fd;
    } catch {
      // The file's own open says why, as openInside would.
      return undefined;
    }
    this.folder = { rel, fd, prefix: `/proc/self/fd/${fd}/` };
    keptShapes.folder = this.folder;
    this.closing = setImmediate(() => this.close());
    this.closing.unref();
    return this.folder;
  }
}

/** lstat of `rel` (not following a link at its end) through its proven parent folder; undefined when absent. */
export function lstatInside(realRoot: string, rel: string): fs.Stats | undefined {
  const slash = rel.lastIndexOf('/');
  const parent = slash < 0 ? '' : rel.slice(0, slash);
  let dir: InsideDir;
  try {
    dir = openDirInside(realRoot, parent);
  } catch (error) {
    if (error instanceof NotInsideError) return undefined;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
  try {
    return dir.lstat(rel.slice(slash + 1));
  } finally {
    dir.close();
  }
}

/** The byte past a file's expected end is read into this (synchronously, so one buffer serves every read). */
const END_PROBE = Buffer.alloc(1);

/**
 * Reads exactly `target.length` bytes of a proven descriptor from its start into `target`,
 * and proves there is nothing after them: a file that shrank or grew since it was measured
 * is `changed` (the message names `rel` only, never a size).
 *
 * Each read asks for one byte more than is left, the last one into END_PROBE (one `preadv`
 * of two buffers). A read of a regular file that returns less than it asked for has reached
 * the end, so a read that fills `target` and not the probe proves the end in the same call.
 * A separate read of the byte past the end was a second system call for every file (10,000
 * files opened, read and closed: 115-126 ms against 132-151 ms on this machine's VM).
 */
export function readDescriptorInto(fd: number, target: Buffer, rel: string): void {
  let filled = 0;
  for (;;) {
    const left = target.length - filled;
    const read = fs.readvSync(fd, [filled === 0 ? target : target.subarray(filled), END_PROBE], filled);
    // More than was left: the file grew. Nothing while some was left: it shrank.
    if (read > left || (read === 0 && left > 0)) throw new NotInsideError(rel, 'changed');
    filled += read;
    if (read === left) return;
  }
}

export interface ReadInsideOptions extends OpenInsideOptions {
  /** Refuse a file larger than this (its size, from the descriptor, is checked before reading). */
  maxBytes?: number;
}

/**
 * The bytes of the regular file `rel`, read through a descriptor proven inside, with the
 * fstat of that descriptor. A folder is EISDIR; a file over `maxBytes` throws RangeError
 * naming `rel` and the limit only.
 */
export function readFileInside(
  realRoot: string,
  rel: string,
  options: ReadInsideOptions = {},
): { bytes: Buffer; stats: fs.Stats } {
  const { fd, stats } = openInside(realRoot, rel, options);
  try {
    if (!stats.isFile()) {
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read ${JSON.stringify(rel)}`), {
        code: 'EISDIR',
      });
    }
    if (options.maxBytes !== undefined && stats.size > options.maxBytes) {
      throw new RangeError(`${JSON.stringify(rel)} is larger than the limit of ${options.maxBytes} bytes`);
    }
    const bytes = Buffer.allocUnsafe(stats.size);
    readDescriptorInto(fd, bytes, rel);
    return { bytes, stats };
  } finally {
    fs.closeSync(fd);
  }
}
