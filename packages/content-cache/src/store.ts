import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { CacheKey } from './canonical-key.js';
import { defaultCacheRoot } from './default-root.js';
import { StoreRootError } from './errors.js';
import { StoreLayout } from './layout.js';
import type { StoreEvent, StoreRemote } from './remote/store-remote.js';
import type { LockOptions } from './lock.js';
import { type StoreFs, nodeStoreFs } from './store-fs.js';
import { type AcquireOptions, Acquisitions } from './store/acquire.js';
import { StoreCore } from './store/core.js';
import { recallFact, rememberFact } from './store/facts.js';
import {
  type GcReport,
  type StoreEntry,
  type StoreListing,
  type VerifyReport,
  collectGarbage,
  listStore,
  storeEntries,
  verifyStore,
} from './store/maintenance.js';
import { type Fill, type StoredTree, linkPathOf } from './store/publish.js';
import { RemoteTier } from './store/remote-tier.js';

export type { AcquireOptions } from './store/acquire.js';
export type { ObjectMarker } from './store/marker.js';
export type { GcReport, StoreEntry, StoreListing, VerifyReport } from './store/maintenance.js';
export type { Fill, FillContext, StoredTree } from './store/publish.js';

export interface ContentStoreOptions {
  /**
   * Absolute folder for the store, created when missing. Default `defaultCacheRoot()`:
   * `$XDG_CACHE_HOME/agentproto`, else `~/.cache/agentproto`.
   */
  root?: string;
  /**
   * The caller's workspace: a root inside it is refused (`CACHE_ROOT_IN_WORKSPACE`), so cache
   * trees never land in user files. Default none: not checked.
   */
  workspace?: string;
  /** Filesystem to use. Default `nodeStoreFs` (`node:fs/promises`). */
  fs?: StoreFs;
  /** The publication lock between processes: when a holder counts as dead, who hears of a lost lock. Default 10 s stale, no hook. */
  lock?: LockOptions;
  /** fsync every file of a tree before its marker is written (survives power loss; slower). Default false. */
  syncFiles?: boolean;
  /**
   * A shared tier (an OCI registry through `ociRemote`): asked on a local miss before the
   * fill runs, and given every tree a fill published. Its failures are events, never errors.
   * Default none: local only.
   */
  remote?: StoreRemote;
  /** Told what the remote tier did: hits, misses, pushes, and warnings when it was bypassed. Default none. */
  onEvent?: (event: StoreEvent) => void;
}

/**
 * Opens (creating if needed) a content store. Checks the root before anything is written:
 * it must be absolute, outside the caller's workspace, and usable. Stores in one folder are
 * safe to share between processes; open one per root and keep it.
 *
 * @example
 * ```ts
 * import { openContentStore } from '@agentproto/content-cache';
 *
 * const store = await openContentStore({ workspace: process.cwd() }); // the default root
 * const tree = await store.acquire(
 *   { provider: 'my-host', declaration: { url }, version: etag, contentId: `${url}@${etag}` },
 *   async (destination, { writeFile }) => {
 *     await writeFile('data.json', await (await fetch(url)).text());
 *   },
 * );
 * console.log(tree.path, tree.fromCache);
 * ```
 *
 * @throws {StoreRootError} `CACHE_ROOT_INVALID`: `root` is not absolute or holds a NUL.
 * @throws {StoreRootError} `CACHE_ROOT_IN_WORKSPACE`: `root` is inside `workspace`.
 * @throws {StoreRootError} `CACHE_ROOT_UNUSABLE`: a folder of the store cannot be made or read.
 */
export async function openContentStore(options: ContentStoreOptions = {}): Promise<ContentStore> {
  const fs = options.fs ?? nodeStoreFs;
  const root = options.root ?? defaultCacheRoot();
  if (typeof root !== 'string' || root.includes('\0') || !isAbsolute(root)) {
    throw new StoreRootError('CACHE_ROOT_INVALID', String(root), 'the root must be an absolute path without NUL');
  }
  if (options.workspace !== undefined) await refuseRootInside(fs, root, options.workspace);
  const layout = new StoreLayout(root);
  for (const folder of layout.folders) {
    try {
      await fs.mkdir(folder, { recursive: true });
      await proveReadable(fs, folder);
    } catch (error) {
      throw new StoreRootError(
        'CACHE_ROOT_UNUSABLE',
        root,
        `cannot use ${folder}: ${(error as NodeJS.ErrnoException).code ?? error}`,
        error,
      );
    }
  }
  return construct(new StoreCore(layout, fs, options), options);
}

/**
 * Reads a store folder's first entry, not the whole folder: a `readdir` of a million key
 * records at every open cost a second and 100 MiB of heap. With a `StoreFs` that has no
 * `opendir`, one `readdir`.
 */
async function proveReadable(fs: StoreFs, folder: string): Promise<void> {
  if (!fs.opendir) {
    await fs.readdir(folder);
    return;
  }
  const dir = await fs.opendir(folder, { bufferSize: 1 });
  try {
    await dir.read();
  } finally {
    await dir.close().catch(() => undefined);
  }
}

async function refuseRootInside(fs: StoreFs, root: string, workspace: string): Promise<void> {
  const realWorkspace = await realpathOfNearest(fs, workspace);
  const realRoot = await realpathOfNearest(fs, root);
  const rel = relative(realWorkspace, realRoot);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
    throw new StoreRootError('CACHE_ROOT_IN_WORKSPACE', root, `the root is inside the workspace ${workspace}`);
  }
}

/** realpath of the longest existing prefix, plus the rest: a root may not exist yet. */
async function realpathOfNearest(fs: StoreFs, path: string): Promise<string> {
  let existing = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(await fs.realpath(existing), ...rest.reverse());
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest.push(existing.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      existing = parent;
    }
  }
}

/** How openContentStore makes a store: the constructor is private, so that is the only way. */
let construct: (core: StoreCore, options: ContentStoreOptions) => ContentStore;

/**
 * A content store: acquisition and publication (store/acquire.ts, store/publish.ts), the
 * remote tier (store/remote-tier.ts), facts (store/facts.ts) and maintenance
 * (store/maintenance.ts), over what they share (store/core.ts). Made by openContentStore.
 */
export class ContentStore {
  static {
    construct = (core, options) => new ContentStore(core, options);
  }

  readonly root: string;
  /**
   * Where private folders of acquisitions live (`<root>/private`, 0700): one root the store
   * owns, so `gc` finds and securely removes what a killed process left there.
   */
  readonly privateRoot: string;
  private readonly core: StoreCore;
  private readonly remoteTier: RemoteTier | undefined;
  private readonly acquisitions: Acquisitions;

  private constructor(core: StoreCore, options: ContentStoreOptions) {
    this.core = core;
    this.root = core.root;
    this.privateRoot = core.layout.private;
    this.remoteTier = options.remote ? new RemoteTier(core, options.remote, options.onEvent) : undefined;
    this.acquisitions = new Acquisitions(core, this.remoteTier);
  }

  /**
   * Returns the tree stored for `key`, running `fill` only on a miss. The fill gets an
   * absent destination inside a fresh staging folder; what it leaves there is checked,
   * sealed and published by one rename, then the key record and the declaration link are
   * written. A fill that throws or is aborted publishes nothing and leaves nothing behind.
   * Identical acquisitions in one process share one fill; across processes, the first to
   * publish wins and the others get its tree.
   *
   * @example
   * ```ts
   * const tree = await store.acquire(
   *   { provider: 'git', declaration: { repo, path }, version: commit, contentId: `${repo}@${commit}:${path}` },
   *   (destination) => fetchDirectory(repo, commit, path, destination),
   *   { signal: AbortSignal.timeout(60_000), check: async (dir) => assertHasSkillMd(dir) },
   * );
   * const skill = await readFile(join(tree.linkPath, 'SKILL.md'), 'utf8');
   * ```
   *
   * @throws {InvalidKeyError} `CACHE_INVALID_KEY`: the key is not plain JSON, or a name in it is empty or holds a NUL.
   * @throws {FillFailedError} `CACHE_FILL_FAILED`: `fill` (or `check`) threw; its error is the `cause`.
   * @throws {FillOutsideDestinationError} `CACHE_FILL_OUTSIDE_DESTINATION`: the fill wrote beside its destination.
   * @throws {UnsafeTreeError} `CACHE_UNSAFE_TREE`: the tree holds a link that leaves it, a dangling or
   *   absolute link, a `.git` folder, or something that is not a file, folder or link.
   * @throws {AcquisitionAbortedError} `CACHE_ABORTED`: `signal` aborted before publication.
   * @throws {CorruptObjectError} `CACHE_CORRUPT_OBJECT`: the stored object for the key is damaged (run `verify`).
   * @throws {LockCompromisedError} `CACHE_LOCK_COMPROMISED`: the publication lock was lost before the commit point.
   * @throws {StoreIOError} `CACHE_IO`: a filesystem step failed (`path` names it).
   */
  acquire(key: CacheKey, fill: Fill, options: AcquireOptions = {}): Promise<StoredTree> {
    return this.acquisitions.acquire(key, fill, options);
  }

  /**
   * The tree stored for `key`, or undefined. Reads two small files and a link; never walks
   * the tree. It answers only once the declaration link is in place too (the key record is
   * written first, the link right after), so the `linkPath` it returns is always there.
   * Never fills and never asks the remote.
   *
   * @example
   * ```ts
   * const tree = await store.lookup(key);
   * if (tree === undefined) console.log('not cached yet');
   * ```
   *
   * @throws {InvalidKeyError} `CACHE_INVALID_KEY`: the key is not plain JSON, or a name in it is empty or holds a NUL.
   * @throws {StoreIOError} `CACHE_IO`: the key record exists but cannot be read.
   */
  lookup(key: CacheKey): Promise<StoredTree | undefined> {
    return this.acquisitions.lookup(key);
  }

  /** Where the declaration link of `key`'s declaration lives (it may not exist yet). */
  linkPathOf(key: Pick<CacheKey, 'provider' | 'declaration'>): string {
    return linkPathOf(this.core, key);
  }

  /**
   * Pushes what the store holds for `key` to the remote now, and waits for it (the CLI's
   * `cache push`). Unlike background pushes, a failure is thrown. False when the key is
   * not in the store.
   */
  async push(key: CacheKey, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    if (!this.remoteTier) throw new TypeError('this store has no remote');
    return this.remoteTier.push(key, await this.lookup(key), options.signal);
  }

  /** Resolves once every background push and fact write to the remote has finished (or failed and been reported). */
  async remoteIdle(): Promise<void> {
    await this.remoteTier?.idle();
  }

  /**
   * Remembers a small fact that never changes once true (the tree id of a directory at a
   * commit, say), so a later call in any process can skip the work of finding it again.
   * Never a secret: facts are plain files. Written to a temporary name and renamed, so a
   * reader sees the whole value or none; writing a name again replaces it with what must
   * be the same value.
   */
  remember(name: string, value: string): Promise<void> {
    return rememberFact(this.core, this.remoteTier, name, value);
  }

  /**
   * A fact `remember` stored under `name` in this store, or undefined. A damaged or foreign
   * file is a miss. Never asks the remote: a fact decides what content is taken (a git
   * tree id becomes the content id a pulled tree is proven against), so only what this
   * store's own callers learned from the origin counts.
   */
  recall(name: string): Promise<string | undefined> {
    return recallFact(this.core, name);
  }

  /**
   * Every object, key and declaration link in the store (`agentproto cache list`). Records
   * that are damaged or half-written are left out (gc removes them).
   *
   * @example
   * ```ts
   * const { objects, keys } = await store.list();
   * for (const { key, objectId } of keys) console.log(key.provider, key.version, objectId);
   * ```
   *
   * @throws {StoreIOError} `CACHE_IO`: a folder of the store cannot be read.
   */
  list(): Promise<StoreListing> {
    return listStore(this.core);
  }

  /**
   * What `list` returns, streamed one record at a time (objects, then keys, then links, each
   * in the order the filesystem gives them): memory stays small however many keys a store
   * holds, where `list` returns them all at once.
   *
   * @example
   * ```ts
   * for await (const entry of store.entries()) if (entry.kind === 'key') console.log(entry.key.provider, entry.objectId);
   * ```
   *
   * @throws {StoreIOError} `CACHE_IO`: a folder of the store cannot be read.
   */
  entries(): AsyncIterable<StoreEntry> {
    return storeEntries(this.core);
  }

  /**
   * Re-hashes every object against its marker. With `quarantine`, corrupt objects are moved
   * to quarantine/ and the keys that led to them are removed, so the next acquisition
   * fetches the content again; declaration links to them are replaced by that acquisition
   * (or removed by gc). A corrupt object is reported, not thrown. `quarantine` defaults to false.
   *
   * @example
   * ```ts
   * const report = await store.verify({ quarantine: true });
   * for (const bad of report.corrupt) console.error(bad.objectId, bad.reason);
   * ```
   *
   * @throws {StoreIOError} `CACHE_IO`: a folder of the store cannot be read, or (with `quarantine`) moved.
   * @throws {LockCompromisedError} `CACHE_LOCK_COMPROMISED`: with `quarantine`, the lock was lost.
   */
  verify(options: { quarantine?: boolean } = {}): Promise<VerifyReport> {
    return verifyStore(this.core, options);
  }

  /**
   * Removes objects that no key record or declaration link reaches, keys and links whose
   * object is gone, staging folders of dead writers, and temporary files they left. Holds
   * the publication lock throughout, so nothing it judges unreachable is being published.
   * Safe while other processes acquire.
   *
   * @example
   * ```ts
   * const { removedObjects, freedBytes } = await store.gc();
   * console.log(`${removedObjects.length} objects removed, ${freedBytes} bytes freed`);
   * ```
   *
   * @throws {StoreIOError} `CACHE_IO`: the lock cannot be taken, or a folder of the store cannot be read.
   * @throws {LockCompromisedError} `CACHE_LOCK_COMPROMISED`: the lock was lost while collecting.
   */
  gc(): Promise<GcReport> {
    return collectGarbage(this.core);
  }
}
