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
  type StoreListing,
  type VerifyReport,
  collectGarbage,
  listStore,
  verifyStore,
} from './store/maintenance.js';
import { type Fill, type StoredTree, linkPathOf } from './store/publish.js';
import { RemoteTier } from './store/remote-tier.js';

export type { AcquireOptions } from './store/acquire.js';
export type { ObjectMarker } from './store/marker.js';
export type { GcReport, StoreListing, VerifyReport } from './store/maintenance.js';
export type { Fill, FillContext, StoredTree } from './store/publish.js';

export interface ContentStoreOptions {
  /** Absolute folder for the store. Default: the platform cache folder (see defaultCacheRoot). */
  root?: string;
  /** The caller's workspace: a root inside it is refused, so cache trees never land in user files. */
  workspace?: string;
  /** Filesystem to use; default `node:fs/promises`. */
  fs?: StoreFs;
  lock?: LockOptions;
  /** fsync every file of a tree before its marker is written (survives power loss; slower). */
  syncFiles?: boolean;
  /**
   * A shared tier (an OCI registry through `ociRemote`): asked on a local miss before the
   * fill runs, and given every tree a fill published. Its failures are events, never errors.
   */
  remote?: StoreRemote;
  /** Told what the remote tier did: hits, misses, pushes, and warnings when it was bypassed. */
  onEvent?: (event: StoreEvent) => void;
}

/**
 * Opens (creating if needed) a content store. Checks the root before anything is written:
 * it must be absolute, outside the caller's workspace, and usable.
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
      await fs.readdir(folder);
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
   * Identical acquisitions in one process share one fill.
   */
  acquire(key: CacheKey, fill: Fill, options: AcquireOptions = {}): Promise<StoredTree> {
    return this.acquisitions.acquire(key, fill, options);
  }

  /**
   * The tree stored for `key`, or undefined. Reads two small files and a link; never walks
   * the tree. It answers only once the declaration link is in place too (the key record is
   * written first, the link right after), so the `linkPath` it returns is always there.
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

  /** Every object, key and declaration link in the store. */
  list(): Promise<StoreListing> {
    return listStore(this.core);
  }

  /**
   * Re-hashes every object against its marker. With `quarantine`, corrupt objects are moved
   * to quarantine/ and the keys that led to them are removed, so the next acquisition
   * fetches the content again; declaration links to them are replaced by that acquisition
   * (or removed by gc).
   */
  verify(options: { quarantine?: boolean } = {}): Promise<VerifyReport> {
    return verifyStore(this.core, options);
  }

  /**
   * Removes objects that no key record or declaration link reaches, keys and links whose
   * object is gone, staging folders of dead writers, and temporary files they left. Holds
   * the publication lock throughout, so nothing it judges unreachable is being published.
   */
  gc(): Promise<GcReport> {
    return collectGarbage(this.core);
  }
}
