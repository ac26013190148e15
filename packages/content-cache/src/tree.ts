import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { join, posix, sep } from 'node:path';
import { ContentCacheError, StoreIOError, UnsafeTreeError } from './errors.js';
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
  size: number;
  sha256: string;
  /** Set when the writer created the file with this (normalised) mode and saw it kept. */
  mode?: number;
}

export interface SealOptions {
  /** Rewrite modes to 0755/0644 and check links (publication); false only reads (verify). */
  normalize: boolean;
  /** fsync every file, for durability across power loss. */
  syncFiles?: boolean;
  /** Hashes of files written through the fill context's writer, by path relative to the root. */
  known?: ReadonlyMap<string, KnownFile>;
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
 */
export async function sealTree(fs: StoreFs, root: string, options: SealOptions): Promise<TreeSummary> {
  const slicer = new Slicer();
  const rootStat = step('read staged tree', root, () => fs.lstatSync(root));
  if (!rootStat.isDirectory()) {
    throw new UnsafeTreeError('destination-not-a-directory', '.', 'the destination must be a directory');
  }
  if (options.normalize) normalizeMode(fs, root, rootStat.mode, 0o755);
  const realRoot = step('read staged tree', root, () => fs.realpathSync(root));
  const lines: { path: Buffer; line: Buffer }[] = [];
  let files = 0;
  let bytes = 0;

  const dirs = [''];
  while (dirs.length > 0) {
    const rel = dirs.pop()!;
    const abs = rel === '' ? root : join(root, rel);
    const children = step('read staged tree', abs, () => fs.readdirSync(abs, { withFileTypes: true }));
    for (const child of children) {
      await slicer.maybeYield();
      const childRel = rel === '' ? child.name : `${rel}/${child.name}`;
      // Names from readdir are single segments, so plain concatenation is a correct join.
      const childAbs = `${abs}/${child.name}`;
      if (child.isDirectory()) {
        dirs.push(childRel);
        const stat = step('read staged tree', childAbs, () => fs.lstatSync(childAbs));
        const mode = options.normalize ? normalizeMode(fs, childAbs, stat.mode, 0o755) : stat.mode & 0o7777;
        lines.push(entry('D', mode, childRel, ''));
      } else if (child.isFile()) {
        const known = options.known?.get(childRel);
        if (known?.mode !== undefined && !options.syncFiles) {
          // Created by the fill writer with a normalised mode: nothing to read or change.
          files += 1;
          bytes += known.size;
          lines.push(entry('F', known.mode, childRel, known.sha256));
          continue;
        }
        const stat = step('read staged tree', childAbs, () => fs.lstatSync(childAbs));
        const wanted = stat.mode & 0o111 ? 0o755 : 0o644;
        const mode = options.normalize ? normalizeMode(fs, childAbs, stat.mode, wanted) : stat.mode & 0o7777;
        const hash =
          known && known.size === stat.size && !options.syncFiles
            ? known.sha256
            : await hashFile(fs, childAbs, stat.size, options.syncFiles === true, slicer);
        files += 1;
        bytes += stat.size;
        lines.push(entry('F', mode, childRel, hash));
      } else if (child.isSymbolicLink()) {
        const target = step('read staged tree', childAbs, () => fs.readlinkSync(childAbs));
        if (options.normalize) checkLink(fs, realRoot, childAbs, childRel, target);
        lines.push(entry('L', 0o777, childRel, target));
      } else {
        throw new UnsafeTreeError('special-file', childRel, 'pipes, sockets and devices cannot be stored');
      }
    }
  }

  // Byte order of the UTF-8 paths: the same on every platform and locale.
  lines.sort((a, b) => Buffer.compare(a.path, b.path));
  const digest = createHash('sha256').update(Buffer.concat(lines.map((l) => l.line)));
  return { digest: `sha256:${digest.digest('hex')}`, files, bytes };
}

/** The digest of a tree as it is, without changing or checking anything (what verify compares). */
export function hashTree(root: string, fs: StoreFs = nodeStoreFs): Promise<TreeSummary> {
  return sealTree(fs, root, { normalize: false });
}

/**
 * `type mode path NUL payload NUL`: NUL cannot occur in a name or a link target, so entries
 * never run together. `path` is a view into `line`, for sorting by the path's bytes.
 */
function entry(type: 'D' | 'F' | 'L', mode: number, path: string, payload: string): { path: Buffer; line: Buffer } {
  const prefix = `${type} ${mode.toString(8)} `;
  const line = Buffer.from(`${prefix}${path}\0${payload}\0`, 'utf8');
  return { path: line.subarray(prefix.length, line.indexOf(0, prefix.length)), line };
}

function normalizeMode(fs: StoreFs, abs: string, current: number, wanted: number): number {
  if ((current & 0o7777) !== wanted) step('set mode', abs, () => fs.chmodSync(abs, wanted));
  return wanted;
}

function checkLink(fs: StoreFs, realRoot: string, abs: string, rel: string, target: string): void {
  if (posix.isAbsolute(target) || /^[A-Za-z]:/.test(target) || target.startsWith('\\')) {
    throw new UnsafeTreeError('link-absolute', rel, 'links must be relative');
  }
  // Judged on paper first, so a link that leaves the tree is named as such even when its
  // target does not exist.
  const lexical = posix.normalize(posix.join(posix.dirname(rel), target));
  if (lexical === '..' || lexical.startsWith('../')) throw new UnsafeTreeError('link-escapes', rel, 'the link points outside the tree');
  let resolved: string;
  try {
    // realpath follows every link on the way, so a chain of links that are each harmless
    // on paper (`up -> ..`, `x -> up/..`) is judged by where it really ends.
    resolved = fs.realpathSync(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new UnsafeTreeError('link-dangling', rel, 'the link points at nothing');
    if (code === 'ELOOP') throw new UnsafeTreeError('link-loop', rel, 'the link loops');
    throw new StoreIOError('read staged tree', abs, error);
  }
  if (resolved !== realRoot && !resolved.startsWith(realRoot + sep)) {
    throw new UnsafeTreeError('link-escapes', rel, 'the link resolves outside the tree');
  }
}

async function hashFile(fs: StoreFs, abs: string, size: number, sync: boolean, slicer: Slicer): Promise<string> {
  const hash = createHash('sha256');
  if (size <= WHOLE_READ_LIMIT && !sync) {
    hash.update(step('read staged tree', abs, () => fs.readFileSync(abs)));
    return hash.digest('hex');
  }
  const fd = step('read staged tree', abs, () => fs.openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW));
  try {
    const buffer = Buffer.allocUnsafe(Math.min(Math.max(size, 1), CHUNK));
    for (;;) {
      const read = step('read staged tree', abs, () => fs.readSync(fd, buffer, 0, buffer.length, null));
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
      await slicer.maybeYield();
    }
    if (sync) step('sync file', abs, () => fs.fsyncSync(fd));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/** Hands the event loop a turn every few milliseconds of synchronous work. */
class Slicer {
  private since = performance.now();
  private calls = 0;
  async maybeYield(): Promise<void> {
    // Reading the clock costs more than most entries: look at it every 32 calls.
    if ((++this.calls & 31) !== 0 || performance.now() - this.since < SLICE_MS) return;
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

function asStoreError(name: string, path: string, error: unknown): unknown {
  if (error instanceof ContentCacheError || typeof (error as NodeJS.ErrnoException | undefined)?.code !== 'string') return error;
  return new StoreIOError(name, path, error);
}
