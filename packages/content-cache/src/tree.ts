import { createHash } from 'node:crypto';
import { constants, fstatSync } from 'node:fs';
import { join, posix, sep } from 'node:path';
import { gitPathProblem, isDotGit, isDotGitmodules } from '@agentproto/archive';
import { ContentCacheError, StoreIOError, UnsafeTreeError } from './errors.js';
import { NotInsideError, descriptorIsInside, descriptorPath } from '@agentproto/fs-inside';
import { type StoreFs, nodeStoreFs } from './store-fs.js';

/** What a sealed tree hashes to: sorted paths, types, modes and SHA-256 of contents. */
export interface TreeSummary {
  /** `sha256:` + hex digest over every entry, in byte order of their paths. */
  digest: string;
  /** Regular files in the tree. */
  files: number;
  /** Bytes in those files. */
  bytes: number;
}

/** A file the fill wrote through the store's writer: its hash, and its mode when the writer created it. */
export interface KnownFile {
  /** Its path relative to the root: its folder's, `/` and its name (its name alone in the root). */
  path: string;
  size: number;
  /**
   * Its SHA-256, or the promise of a thread still reading it back: sealing walks the tree
   * meanwhile and waits only at the end. Undefined once settled: the thread could not tell,
   * and sealing hashes the file itself.
   */
  sha256: string | Promise<string | undefined>;
  /** Set when the writer created the file with this (normalised) mode and saw it kept. */
  mode?: number;
}

/** Files written through the fill writer: by folder (relative to the root, '' for the root itself), then by name. */
export type KnownFiles = ReadonlyMap<string, ReadonlyMap<string, KnownFile>>;

export interface SealOptions {
  /** Rewrite modes to 0755/0644 and check links (publication); false only reads (verify). */
  normalize: boolean;
  /** fsync every file, for durability across power loss. */
  syncFiles?: boolean;
  /** Hashes of files written through the fill context's writer. */
  known?: KnownFiles;
  /** See HashTreeOptions.within. */
  within?: string;
  /** See HashTreeOptions.skipDotGit. Never set when publishing: a store refuses such a tree. */
  skipDotGit?: boolean;
}

export interface HashTreeOptions {
  /**
   * A real path (no links) the tree must stay inside, for a tree in a folder its owner can
   * change while it is hashed: every folder and file is proven inside it, not inside
   * wherever the root's name leads when hashing starts (the owner may have swapped a folder
   * above the root for a link by then). Defaults to the root's own real path.
   */
  within?: string;
  /**
   * Leave `.git` entries (every spelling git refuses, see isDotGit) out of the digest
   * instead of refusing the tree: for a host folder that is itself a git checkout, hashed
   * the way `copyInside` with the same option copies it. A link into such an entry, and a
   * `.gitmodules` link, are still refused.
   */
  skipDotGit?: boolean;
}

/** Files up to this size are hashed from one read; larger ones in chunks, yielding between them. */
const WHOLE_READ_LIMIT = 4 * 1024 * 1024;
const CHUNK = 1024 * 1024;
/** Synchronous work between two turns of the event loop. */
const SLICE_MS = 4;

/**
 * Walks a tree, checks it is publishable, and computes its digest.
 *
 * With `normalize`, every folder becomes 0755 and every file 0755 when any execute bit is
 * set, else 0644: execute bits survive, setuid, setgid and sticky bits do not, and group or
 * world write bits cannot leak into a shared cache. Links must be relative and resolve to an
 * existing entry inside the tree, following every link on the way, because a store is read
 * by other processes and sandboxes that must never be led outside it; a relative link is the
 * only kind that still points at the same entry after the staged tree is renamed into place.
 * Pipes, sockets and devices are refused: they are not content.
 *
 * A `.git` entry, in every spelling git itself refuses to check out (`.GIT`, `git~1`,
 * `.git.`, `.g\u200cit`, see archive/git-name.ts), is refused too, as is a link whose target
 * goes through one and a `.gitmodules` that is a link. Whatever filled the tree (a provider,
 * the remote tier), a store is where conversations and sandboxes work: a `.git` folder
 * there is its writer's repository configuration, and `core.fsmonitor` or a hook in it runs
 * as soon as anyone types `git status` in that folder (on macOS and Windows `.GIT` and
 * `git~1` are `.git`). This check runs on every publication, so it holds for every provider
 * whatever its own checks are; hashing (normalize false) refuses such a tree as well.
 */
export async function sealTree(fs: StoreFs, root: string, options: SealOptions): Promise<TreeSummary> {
  const slicer = new Slicer();
  const rootStat = step('read staged tree', root, () => fs.lstatSync(root));
  if (!rootStat.isDirectory()) {
    throw new UnsafeTreeError('destination-not-a-directory', '.', 'the destination must be a directory');
  }
  if (options.normalize) normalizeMode(fs, root, root, rootStat.mode, 0o755);
  const realRoot = options.within ?? step('read staged tree', root, () => fs.realpathSync(root));
  /**
   * The digest's entries. A file the writer created goes in with the writer's own record, and
   * its line is written only when the digest is taken: the walk builds no path or line for
   * it. Sealing 10,000 files the writer created took 36-40 ms this way and 49-63 ms when the
   * walk built every line (medians of ten fresh trees on tmpfs, side by side in one
   * process), and what the walk built was still alive when the next collection came.
   */
  const lines: Line[] = [];
  /** Files the writer created whose hash a thread still owes, with where their line goes. */
  const owed: { at: number; folder: string; name: string; file: KnownFile & { mode: number } }[] = [];
  let files = 0;
  let bytes = 0;

  const dirs = [''];
  while (dirs.length > 0) {
    const rel = dirs.pop()!;
    const abs = rel === '' ? root : join(root, rel);
    // The folder is opened and proven inside first, then listed and its entries measured,
    // read and changed through that descriptor (`here`): a folder swapped for a link after
    // it was listed leads nothing outside the tree into the digest, a store or an error.
    const dir = openFolder(fs, realRoot, rel, abs);
    try {
      const here = descriptorPath(dir) ?? abs;
      const children = step('read staged tree', abs, () => fs.readdirSync(here, { withFileTypes: true }));
      const knownHere = options.known?.get(rel);
      for (const child of children) {
        if (slicer.due()) await slicer.turn();
        if (isDotGit(child.name)) {
          if (options.skipDotGit === true) continue;
          throw new UnsafeTreeError(
            'git-dir',
            rel === '' ? child.name : `${rel}/${child.name}`,
            'a .git entry (in a spelling git itself refuses) is never stored: it would be a repository to whoever runs git in this tree',
          );
        }
        if (knownHere !== undefined && !options.syncFiles && child.isFile()) {
          const known = knownHere.get(child.name);
          if (known?.mode !== undefined) {
            // Created by the fill writer with a normalised mode: nothing to read or change.
            files += 1;
            if (typeof known.sha256 === 'string') bytes += known.size;
            else
              owed.push({
                at: lines.length,
                folder: rel,
                name: child.name,
                file: known as KnownFile & { mode: number },
              });
            lines.push({ path: known.path, line: '', file: known });
            continue;
          }
        }
        const childRel = rel === '' ? child.name : `${rel}/${child.name}`;
        // Names from readdir are single segments, so plain concatenation is a correct join.
        const childAbs = `${abs}/${child.name}`;
        const childHere = `${here}/${child.name}`;
        if (child.isDirectory()) {
          dirs.push(childRel);
          const stat = step('read staged tree', childAbs, () => fs.lstatSync(childHere));
          if (!stat.isDirectory()) throw new NotInsideError(childRel, 'changed');
          const mode = options.normalize
            ? normalizeMode(fs, childHere, childAbs, stat.mode, 0o755)
            : stat.mode & 0o7777;
          lines.push(entry('D', mode, childRel, ''));
        } else if (child.isFile()) {
          files += 1;
          const known = knownHere?.get(child.name);
          const sealed = await sealFile(fs, realRoot, childRel, childHere, childAbs, options, slicer, known);
          bytes += sealed.size;
          lines.push(entry('F', sealed.mode, childRel, sealed.sha256));
        } else if (child.isSymbolicLink()) {
          const target = step('read staged tree', childAbs, () => {
            try {
              return fs.readlinkSync(childHere);
            } catch (error) {
              // EINVAL: no longer a link (the entry was swapped since it was listed).
              if ((error as NodeJS.ErrnoException).code === 'EINVAL') throw new NotInsideError(childRel, 'changed');
              throw error;
            }
          });
          if (isDotGitmodules(child.name))
            throw new UnsafeTreeError(
              'gitmodules-link',
              childRel,
              'git refuses a .gitmodules that is a link (it would read submodule settings from where it points)',
            );
          if (gitPathProblem(target) !== undefined)
            throw new UnsafeTreeError('git-dir', childRel, 'the link leads through a .git entry');
          if (options.normalize) checkLink(fs, realRoot, childAbs, childRel, target);
          lines.push(entry('L', 0o777, childRel, target));
        } else {
          throw new UnsafeTreeError('special-file', childRel, 'pipes, sockets and devices cannot be stored');
        }
      }
    } finally {
      step('read staged tree', abs, () => fs.closeSync(dir));
    }
  }

  // What the threads still owed was read back while the tree was walked. A file a thread
  // could not tell is sealed as one the writer never saw, in its folder opened and proven
  // inside again.
  for (const { at, folder, name, file } of owed) {
    const rel = file.path;
    const sha256 = await file.sha256;
    if (sha256 !== undefined) {
      bytes += file.size;
      lines[at] = entry('F', file.mode, rel, sha256);
      continue;
    }
    const abs = folder === '' ? root : join(root, folder);
    const dir = openFolder(fs, realRoot, folder, abs);
    try {
      const here = descriptorPath(dir) ?? abs;
      const sealed = await sealFile(fs, realRoot, rel, `${here}/${name}`, `${abs}/${name}`, options, slicer, undefined);
      bytes += sealed.size;
      lines[at] = entry('F', sealed.mode, rel, sealed.sha256);
    } finally {
      step('read staged tree', abs, () => fs.closeSync(dir));
    }
  }

  sortByPathBytes(lines);
  // Hashed a stretch of lines at a time: no text of the whole tree is ever built.
  const digest = createHash('sha256');
  let text = '';
  for (const line of lines) {
    text += line.file === undefined ? line.line : knownLine(line.file);
    if (text.length >= HASHED_TEXT) {
      digest.update(text, 'utf8');
      text = '';
    }
  }
  return { digest: `sha256:${digest.update(text, 'utf8').digest('hex')}`, files, bytes };
}

/**
 * Characters of lines hashed at once. Joining every line first built a text of the whole
 * tree (1.2 MB for 10,000 files) only to hash it once.
 */
const HASHED_TEXT = 64 * 1024;

/**
 * A file of the tree the writer did not create (or whose mode it could not vouch for):
 * measured, its mode normalised, and hashed, unless the writer's hash is of the size it
 * holds. `here` is the entry in its proven folder; errors name `abs`.
 */
async function sealFile(
  fs: StoreFs,
  realRoot: string,
  rel: string,
  here: string,
  abs: string,
  options: SealOptions,
  slicer: Slicer,
  known: KnownFile | undefined,
): Promise<{ mode: number; sha256: string; size: number }> {
  const stat = step('read staged tree', abs, () => fs.lstatSync(here));
  if (!stat.isFile()) throw new NotInsideError(rel, 'changed');
  const wanted = stat.mode & 0o111 ? 0o755 : 0o644;
  const mode = options.normalize ? normalizeMode(fs, here, abs, stat.mode, wanted) : stat.mode & 0o7777;
  const sha256 = known && known.size === stat.size && !options.syncFiles ? await known.sha256 : undefined;
  if (sha256 !== undefined) return { mode, sha256, size: stat.size };
  return { mode, ...(await hashFile(fs, realRoot, rel, here, abs, options.syncFiles === true, slicer)) };
}

/** A code unit of a surrogate pair: the one place UTF-16 order differs from UTF-8 byte order. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Sorts lines by the UTF-8 bytes of their paths (the same on every platform and locale).
 * Strings compare by UTF-16 code units, which is the same order unless a path holds a
 * character past U+FFFF (a surrogate pair sorts before U+E000-U+FFFF in UTF-16, after them
 * in UTF-8): then the paths' bytes are compared.
 */
function sortByPathBytes(lines: Line[]): void {
  if (lines.some((line) => SURROGATE.test(line.path))) {
    const bytes = new Map(lines.map((line) => [line, Buffer.from(line.path, 'utf8')]));
    lines.sort((a, b) => Buffer.compare(bytes.get(a)!, bytes.get(b)!));
  } else lines.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The digest of a tree as it is, without changing anything (what verify compares). It
 * refuses what no store holds (`.git` entries, unless `skipDotGit`; special files), not
 * what publication would fix or judge (modes, where links lead).
 */
export function hashTree(root: string, fs: StoreFs = nodeStoreFs, options: HashTreeOptions = {}): Promise<TreeSummary> {
  return sealTree(fs, root, { normalize: false, within: options.within, skipDotGit: options.skipDotGit });
}

/**
 * One entry of the digest, and its path to sort by: its line, or the record of a file the
 * writer created, whose line is written from it (one shape either way, so sorting reads
 * `path` from every entry alike).
 */
interface Line {
  path: string;
  line: string;
  file: KnownFile | undefined;
}

/**
 * `type mode path NUL payload NUL`: NUL cannot occur in a name or a link target, so entries
 * never run together. The digest hashes the lines' UTF-8 bytes, in the byte order of the paths.
 */
function entry(type: 'D' | 'F' | 'L', mode: number, path: string, payload: string): Line {
  return { path, line: `${type} ${mode.toString(8)} ${path}\0${payload}\0`, file: undefined };
}

/** The line of a file the writer created and hashed (see entry). */
function knownLine(file: KnownFile): string {
  return `F ${(file.mode as number).toString(8)} ${file.path}\0${file.sha256 as string}\0`;
}

/** Sets a mode through `here` (the entry in its proven folder); errors name `abs`. */
function normalizeMode(fs: StoreFs, here: string, abs: string, current: number, wanted: number): number {
  if ((current & 0o7777) !== wanted) step('set mode', abs, () => fs.chmodSync(here, wanted));
  return wanted;
}

// O_NOFOLLOW: an entry listed as a file or folder that is a link by the time it is opened
// has changed; O_NONBLOCK: nor may one that became a pipe block the walk.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const FOLDER_FLAGS = READ_FLAGS | (constants.O_DIRECTORY ?? 0);

/** A folder of the tree, opened and proven inside it (the root itself is opened by its real path). */
function openFolder(fs: StoreFs, realRoot: string, rel: string, abs: string): number {
  let fd: number;
  try {
    fd = fs.openSync(abs, rel === '' ? FOLDER_FLAGS & ~(constants.O_NOFOLLOW ?? 0) : FOLDER_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (rel !== '' && (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT'))
      throw new NotInsideError(rel, 'changed');
    throw asStoreError('read staged tree', abs, error);
  }
  if (!descriptorIsInside(fd, realRoot, abs)) {
    step('read staged tree', abs, () => fs.closeSync(fd));
    throw new NotInsideError(rel === '' ? '.' : rel, 'changed');
  }
  return fd;
}

function checkLink(fs: StoreFs, realRoot: string, abs: string, rel: string, target: string): void {
  if (posix.isAbsolute(target) || /^[A-Za-z]:/.test(target) || target.startsWith('\\')) {
    throw new UnsafeTreeError('link-absolute', rel, 'links must be relative');
  }
  // Judged on paper first, so a link that leaves the tree is named as such even when its
  // target does not exist.
  const lexical = posix.normalize(posix.join(posix.dirname(rel), target));
  if (lexical === '..' || lexical.startsWith('../'))
    throw new UnsafeTreeError('link-escapes', rel, 'the link points outside the tree');
  let resolved: string;
  try {
    // realpath follows every link on the way, so a chain of links that are each harmless
    // on paper (`up -> ..`, `x -> up/..`) is judged by where it really ends.
    resolved = fs.realpathSync(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new UnsafeTreeError('link-dangling', rel, 'the link points at nothing');
    if (code === 'ELOOP') throw new UnsafeTreeError('link-loop', rel, 'the link loops');
    throw new StoreIOError('read staged tree', abs, error);
  }
  if (resolved !== realRoot && !resolved.startsWith(realRoot + sep)) {
    throw new UnsafeTreeError('link-escapes', rel, 'the link resolves outside the tree');
  }
}

/**
 * The SHA-256 and size of a file of the tree, read through one descriptor opened in its
 * proven folder (`here`) without following a link, and proven inside where the platform
 * cannot name the folder by its descriptor.
 */
async function hashFile(
  fs: StoreFs,
  realRoot: string,
  rel: string,
  here: string,
  abs: string,
  sync: boolean,
  slicer: Slicer,
): Promise<{ sha256: string; size: number }> {
  let fd: number;
  try {
    fd = fs.openSync(here, READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOENT' || code === 'ENOTDIR') throw new NotInsideError(rel, 'changed');
    throw asStoreError('read staged tree', abs, error);
  }
  try {
    const stat = descriptorIsInside(fd, realRoot, abs) ? fstatSync(fd) : undefined;
    if (!stat?.isFile()) throw new NotInsideError(rel, 'changed');
    const hash = createHash('sha256');
    // Sized to the file (one read, and one more that sees its end), up to CHUNK: a fresh
    // 1 MiB buffer per small file was a fresh mapping and its page faults every time.
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK, stat.size + 1));
    let size = 0;
    for (;;) {
      const read = step('read staged tree', abs, () => fs.readSync(fd, buffer, 0, buffer.length, null));
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
      size += read;
      if (size > WHOLE_READ_LIMIT) await slicer.maybeYield();
    }
    if (sync) step('sync file', abs, () => fs.fsyncSync(fd));
    return { sha256: hash.digest('hex'), size };
  } finally {
    step('read staged tree', abs, () => fs.closeSync(fd));
  }
}

/** Hands the event loop a turn every few milliseconds of synchronous work. */
class Slicer {
  private since = performance.now();
  private calls = 0;
  async maybeYield(): Promise<void> {
    if (this.due()) await this.turn();
  }

  /** Whether the event loop is owed a turn. Reading the clock costs more than most entries: it is read every 32 calls. */
  due(): boolean {
    return (++this.calls & 31) === 0 && performance.now() - this.since >= SLICE_MS;
  }

  /** Hands the event loop a turn. */
  async turn(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/** Runs one synchronous filesystem step; an errno failure becomes a StoreIOError naming the step and path. */
function step<T>(name: string, path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw asStoreError(name, path, error);
  }
}

/** Runs one filesystem step; an errno failure becomes a StoreIOError naming the step and path. */
export async function io<T>(name: string, path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asStoreError(name, path, error);
  }
}

/** io for a synchronous call. */
export function ioSync<T>(name: string, path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw asStoreError(name, path, error);
  }
}

function asStoreError(name: string, path: string, error: unknown): unknown {
  // A path that leads out of the tree (NotInsideError) is the tree's failure, not the filesystem's: it passes as it is.
  if (
    error instanceof ContentCacheError ||
    error instanceof NotInsideError ||
    typeof (error as NodeJS.ErrnoException | undefined)?.code !== 'string'
  )
    return error;
  return new StoreIOError(name, path, error);
}
