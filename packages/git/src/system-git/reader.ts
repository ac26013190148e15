import type { GitObjectReader, GitObjectType, GitRawObject, PreloadOptions } from '../engine.js';
import { GitIoError } from '../errors.js';
import { GitCommandError } from './failure.js';
import type { CommandResult } from './host.js';

/** Runs a git command on the private gitdir that never touches the network. */
export type LocalGit = (
  args: readonly string[],
  stdin: string | undefined,
  signal: AbortSignal | undefined,
) => Promise<CommandResult>;

/**
 * Fetches these object ids from the remote in one request: without any blob (a tree comes
 * with its subtrees), or `whole` (a tree comes with every tree and blob under it).
 */
export type FetchObjects = (oids: readonly string[], signal: AbortSignal | undefined, whole?: boolean) => Promise<void>;

/**
 * A reader's commit whose trees are fetched only once it is known which are needed: when
 * a walk announces its directory (preloadTrees), just the trees on the way there and the
 * directory's own subtree travel, never every tree of the commit.
 */
export interface LazyTrees {
  /** The commit and every tree of it, unless the gitdir already holds them (fetchCommit's eager answer). */
  everything(signal: AbortSignal | undefined): Promise<void>;
  /** The commit and its trees down to `path`'s parent: the path's trees and their siblings, nothing deeper. */
  pathTo(path: string, signal: AbortSignal | undefined): Promise<void>;
}

/**
 * How many bytes of objects one `cat-file --batch` run may bring into memory. Objects are
 * read in the order they were announced, so each batch is loaded once; one object larger
 * than this is loaded on its own (its content is returned whole anyway).
 */
export const BATCH_BYTES = 16 * 1024 * 1024;

const FULL_ID = /^[0-9a-f]{40}$/;
const TYPES = new Set<string>(['commit', 'tree', 'blob', 'tag']);

interface Info {
  type: GitObjectType;
  size: number;
}

/**
 * Reads objects out of the private gitdir through `git cat-file`, many at a time, never one
 * process per object:
 *
 * - `prefetch(oids)` asks `cat-file --batch-check` which of them the gitdir lacks, fetches
 *   those in one request, and plans batches of at most BATCH_BYTES in the order given;
 * - `read(oid)` of an announced object loads its whole batch with one `cat-file --batch`
 *   (the previous batch is dropped: memory stays bounded); any other object is read alone.
 *
 * Reading never fetches: the commands run without any promisor remote configured (the
 * promisor settings are given to `git fetch` alone, as `-c` options, and the gitdir's own
 * config never holds them), so git 2.39, which has no GIT_NO_LAZY_FETCH, cannot start its
 * one-object-at-a-time lazy fetch for a missing object: cat-file reports it `missing`, and
 * the caller turns that into an error.
 */
export class BatchObjectReader implements GitObjectReader {
  private loaded = new Map<string, GitRawObject>();
  private readonly absent = new Set<string>();
  private readonly batchOf = new Map<string, number>();
  private readonly batches: string[][] = [];
  /** Sizes `cat-file --batch-check` gave for announced objects: known before any is loaded. */
  private readonly sizes = new Map<string, number>();
  /**
   * Blobs the gitdir holds, with their sizes, as `ls-tree -l` listed them after the
   * directory came whole: announcing them needs neither a check nor a fetch.
   */
  private readonly listed = new Map<string, number>();

  constructor(
    private readonly gitdir: string,
    private readonly git: LocalGit,
    private readonly fetchObjects: FetchObjects,
    private readonly signal: AbortSignal | undefined,
    /**
     * The gitdir was fetched without blobs: any object not loaded yet is taken to be
     * missing and fetched without asking cat-file first. Wrong only when a blob arrived
     * by an earlier fetch into the same gitdir, and then it merely travels again.
     */
    private readonly blobless = false,
    /**
     * The commit's trees are not fetched yet: preloadTrees fetches those of its path, and
     * any other first read or prefetch fetches them all (LazyTrees.everything).
     */
    private lazy?: LazyTrees,
  ) {}

  /** A first read that no walk announced: the commit's trees, all of them, as fetchCommit promises. */
  private async settle(signal: AbortSignal | undefined): Promise<void> {
    const lazy = this.lazy;
    this.lazy = undefined;
    await lazy?.everything(signal);
  }

  async read(oid: string): Promise<GitRawObject | undefined> {
    if (!FULL_ID.test(oid)) return undefined;
    const hit = this.loaded.get(oid);
    if (hit !== undefined) return hit;
    if (this.lazy) await this.settle(this.signal);
    if (this.absent.has(oid)) return undefined;
    const batch = this.batchOf.get(oid);
    await this.load(batch === undefined ? [oid] : (this.batches[batch] as string[]));
    return this.loaded.get(oid);
  }

  /**
   * Loads the commit, the trees down to `path` and all trees under it with two processes:
   * `ls-tree -r -t` names the trees (it reads trees only, never a blob, so a gitdir without
   * blobs answers it), and one `cat-file --batch` loads them. The caller still hashes each.
   * A lazy reader (fetchCommit without blobs) first fetches exactly those trees: the
   * commit with the trees down to the path's parent, then the directory's tree by id
   * without blobs, which brings its subtree and nothing else; or, when its blobs are read
   * next (`options.blobs`), the directory's tree by id whole, with every tree and blob under
   * it in the same pack (one request, not two), listed with their sizes (`ls-tree -l`) so
   * that announcing the blobs then costs no process.
   *
   * `options.pathOnly`: the commit and the trees on the way only, loaded with one
   * `cat-file --batch` by name (`<commit>:<path>`), without listing them first.
   */
  async preloadTrees(commit: string, path: string, signal?: AbortSignal, options: PreloadOptions = {}): Promise<void> {
    if (!FULL_ID.test(commit)) return;
    const stop = signal ?? this.signal;
    if (options.pathOnly && this.lazy === undefined && !/[\u0000-\u001f\u007f]/.test(path)) {
      // Each name resolves through the trees before it; a tree the gitdir lacks (the
      // directory's own, below the fetched depth) is answered `missing` and left out.
      const parts = path === '' ? [] : path.split('/');
      const names = [
        commit,
        `${commit}^{tree}`,
        ...parts.map((_, i) => `${commit}:${parts.slice(0, i + 1).join('/')}`),
      ];
      for (const [oid, object] of await this.batch(names, stop)) this.loaded.set(oid, object);
      return;
    }
    const lazy = this.lazy;
    this.lazy = undefined;
    // Blobs the last listing named with their sizes, when the directory came whole.
    let blobs: Map<string, number> | undefined;
    /** The directory's tree by id, whole; then its trees and blobs listed with sizes. */
    const fetchWhole = async (tree: string): Promise<CommandResult> => {
      await this.fetchObjects([tree], stop, true);
      const sized = await this.listTrees(commit, path, stop, true);
      // A blob the server left out fails the sizes: the trees are then listed without
      // them, and the blobs go the ordinary way (checked, the missing ones fetched).
      if (sized.code !== 0) return this.listTrees(commit, path, stop);
      blobs = this.listSizes(sized.stdout);
      return sized;
    };
    let listing: CommandResult | undefined;
    if (
      lazy !== undefined &&
      options.blobs &&
      options.tree !== undefined &&
      FULL_ID.test(options.tree) &&
      path !== ''
    ) {
      // Named already (directoryTreeId in this work folder fetched the trees on the way):
      // no listing first. A wrong id lists nothing under the path, and the ordinary way follows.
      listing = await fetchWhole(options.tree);
      if (listing.code !== 0 || blobs === undefined) listing = undefined;
    }
    listing ??= await this.listTrees(commit, path, stop);
    if (listing.code !== 0 && lazy !== undefined) {
      // ls-tree prints each entry on the way before it opens the next tree, so the
      // directory's own id is known when only its subtree is missing (the trees on the way
      // came with directoryTreeId). Otherwise the commit or a tree on the way is missing:
      // those first (one fetch, the trees down to the directory's parent), then its subtree.
      let tree = path === '' ? undefined : treeNamed(listing.stdout, path);
      if (tree === undefined) {
        await lazy.pathTo(path, stop);
        listing = await this.listTrees(commit, path, stop);
        if (listing.code !== 0 && path !== '') tree = treeNamed(listing.stdout, path);
      }
      if (listing.code !== 0 && tree !== undefined && options.blobs) {
        // By id, whole: the directory's tree and every tree and blob under it.
        listing = await fetchWhole(tree);
      } else if (listing.code !== 0 && tree !== undefined) {
        // By id, without blobs: the directory's tree and every tree under it, nothing else.
        await this.fetchObjects([tree], stop);
        listing = await this.listTrees(commit, path, stop);
      }
      if (listing.code !== 0) {
        await lazy.everything(stop);
        listing = await this.listTrees(commit, path, stop);
      }
    }
    // A commit the gitdir lacks: the ordinary walk reports it. When only trees under the
    // path are missing (a gitdir holding the trees down to a depth: directoryTreeId), those
    // on the way were printed before ls-tree failed, and they are loaded all the same.
    if (listing.code !== 0 && listing.stdout.length === 0) return;
    const trees = [commit, `${commit}^{tree}`];
    for (const record of listing.stdout.toString('utf8').split('\0')) {
      const entry = lsTreeRecord(record);
      if (entry?.type === 'tree') trees.push(entry.oid);
    }
    // The blobs too, in the same cat-file run, when their sizes are known and their total is
    // within the directory's byte cap and one batch: a directory over the cap is refused
    // before any of its blobs is loaded.
    if (blobs !== undefined && options.maxBytes !== undefined) {
      let total = 0;
      for (const size of blobs.values()) total += size;
      if (total <= Math.min(options.maxBytes, BATCH_BYTES)) trees.push(...blobs.keys());
    }
    const loaded = await this.batch(trees, stop);
    for (const [oid, object] of loaded) this.loaded.set(oid, object);
  }

  async prefetch(oids: readonly string[], signal?: AbortSignal): Promise<void> {
    // Objects already in memory (preloaded trees) need neither a check nor a fetch.
    const stop = signal ?? this.signal;
    if (this.lazy) await this.settle(stop);
    const ids = [...new Set(oids.filter((oid) => FULL_ID.test(oid) && !this.loaded.has(oid)))];
    if (ids.length === 0) return;
    // Blobs listed with their sizes after the directory came whole: held, sized already.
    const info = new Map<string, Info>();
    for (const oid of ids) {
      const size = this.listed.get(oid);
      if (size !== undefined) info.set(oid, { type: 'blob', size });
    }
    const unknown = ids.filter((oid) => !info.has(oid));
    if (unknown.length > 0 && !this.blobless)
      for (const [oid, found] of await this.check(unknown, stop)) info.set(oid, found);
    const missing = unknown.filter((oid) => !info.has(oid));
    if (missing.length > 0) {
      await this.fetchObjects(missing, stop);
      for (const [oid, found] of await this.check(missing, stop)) info.set(oid, found);
    }
    let size = 0;
    let batch: string[] = [];
    for (const oid of ids) {
      const found = info.get(oid);
      if (found === undefined) {
        // The server did not send it: reading it says so, and the caller reports it.
        this.absent.add(oid);
        continue;
      }
      this.absent.delete(oid);
      this.sizes.set(oid, found.size);
      if (batch.length > 0 && size + found.size > BATCH_BYTES) {
        this.batches.push(batch);
        batch = [];
        size = 0;
      }
      batch.push(oid);
      size += found.size;
      this.batchOf.set(oid, this.batches.length);
    }
    if (batch.length > 0) this.batches.push(batch);
  }

  /**
   * `ls-tree -r -t` of `path` in `commit`: every tree on the way and under it. It reads
   * trees only, never a blob; it fails on the first tree the gitdir lacks.
   */
  private listTrees(
    commit: string,
    path: string,
    signal: AbortSignal | undefined,
    sizes = false,
  ): Promise<CommandResult> {
    // --literal-pathspecs: a directory named `*` or `:(glob)x` is that name, not a pattern.
    // -l (sizes) reads each blob's header: only for a gitdir that holds the blobs.
    return this.git(
      [
        '--literal-pathspecs',
        'ls-tree',
        '-r',
        '-t',
        ...(sizes ? ['-l'] : []),
        '-z',
        '--full-tree',
        commit,
        '--',
        path === '' ? '.' : path,
      ],
      undefined,
      signal,
    );
  }

  /** The blobs of an `ls-tree -l` listing, with their sizes as held by the gitdir, remembered. */
  private listSizes(output: Buffer): Map<string, number> {
    const blobs = new Map<string, number>();
    for (const record of output.toString('utf8').split('\0')) {
      const entry = lsTreeRecord(record);
      if (entry?.type === 'blob' && entry.size !== undefined) blobs.set(entry.oid, entry.size);
    }
    for (const [oid, size] of blobs) this.listed.set(oid, size);
    return blobs;
  }

  size(oid: string): number | undefined {
    return this.sizes.get(oid) ?? this.loaded.get(oid)?.content.length;
  }

  /** Type and size of each object the gitdir holds; absent ones are left out. */
  private async check(oids: readonly string[], signal: AbortSignal | undefined): Promise<Map<string, Info>> {
    const result = await this.run(['cat-file', '--batch-check'], oids, signal);
    const info = new Map<string, Info>();
    for (const line of result.toString('latin1').split('\n')) {
      const match = /^([0-9a-f]{40}) (\w+) (\d+)$/.exec(line);
      if (match && TYPES.has(match[2] as string)) {
        info.set(match[1] as string, { type: match[2] as GitObjectType, size: Number(match[3]) });
      }
    }
    return info;
  }

  /** One `cat-file --batch` for `oids`; what it returns replaces what was loaded before. */
  private async load(oids: readonly string[]): Promise<void> {
    this.loaded = await this.batch(oids, this.signal);
  }

  /** The objects one `cat-file --batch` returns for `oids` (names like `<commit>^{tree}` allowed), by id. */
  private async batch(oids: readonly string[], signal: AbortSignal | undefined): Promise<Map<string, GitRawObject>> {
    const output = await this.run(['cat-file', '--batch'], oids, signal);
    const loaded = new Map<string, GitRawObject>();
    let at = 0;
    while (at < output.length) {
      const newline = output.indexOf(0x0a, at);
      if (newline < 0) break;
      const header = output.toString('latin1', at, newline);
      const match = /^([0-9a-f]{40}) (\w+) (\d+)$/.exec(header);
      if (!match) {
        // `<oid> missing` (or `ambiguous`, for a malformed request): nothing to keep.
        at = newline + 1;
        continue;
      }
      const size = Number(match[3]);
      const start = newline + 1;
      if (start + size > output.length) throw new GitIoError(this.gitdir, 'read objects (a truncated answer) from');
      if (TYPES.has(match[2] as string)) {
        loaded.set(match[1] as string, {
          type: match[2] as GitObjectType,
          content: output.subarray(start, start + size),
        });
      }
      at = start + size + 1; // the content is followed by a newline
    }
    return loaded;
  }

  private async run(
    args: readonly string[],
    oids: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<Buffer> {
    const result = await this.git(args, `${oids.join('\n')}\n`, signal);
    if (result.code !== 0) {
      const cause = new GitCommandError(
        args.join(' '),
        result.code,
        result.stderr.toString('utf8').trim().slice(0, 4096),
      );
      throw new GitIoError(this.gitdir, 'read objects from', cause);
    }
    return result.stdout;
  }
}

/** The id ls-tree's `-z` output gives the tree at exactly `path`, if it printed that entry. */
function treeNamed(output: Buffer, path: string): string | undefined {
  for (const record of output.toString('utf8').split('\0')) {
    const entry = lsTreeRecord(record);
    if (entry?.path === path && entry.mode === '040000' && entry.type === 'tree') return entry.oid;
  }
  return undefined;
}

/** One record of `ls-tree -z` (`<mode> <type> <oid>\t<path>`), or of `ls-tree -l -z` (a size, or `-`, before the tab). */
function lsTreeRecord(
  record: string,
): { mode: string; type: string; oid: string; size?: number; path: string } | undefined {
  const match = /^([0-7]+) (\w+) ([0-9a-f]{40})(?: +(\d+|-))?\t/.exec(record);
  if (!match) return undefined;
  const size = match[4] === undefined || match[4] === '-' ? undefined : Number(match[4]);
  return {
    mode: match[1] as string,
    type: match[2] as string,
    oid: match[3] as string,
    ...(size === undefined ? {} : { size }),
    path: record.slice(match[0].length),
  };
}
