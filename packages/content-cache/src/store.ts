import { randomBytes } from 'node:crypto';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import {
  type CacheKey,
  canonicalJson,
  canonicalKey,
  declarationDigest,
  keyDigest,
  objectIdOf,
  sha256Hex,
} from './canonical-key.js';
import { defaultCacheRoot } from './default-root.js';
import {
  AcquisitionAbortedError,
  ContentCacheError,
  CorruptObjectError,
  FillFailedError,
  FillOutsideDestinationError,
  RemoteFactMismatchError,
  RemoteMismatchError,
  RemoteUnprovenError,
  StoreIOError,
  StoreRootError,
  UnsafeTreeError,
} from './errors.js';
import { CONTENT, MARKER, StoreLayout, TEMP_PREFIX } from './layout.js';
import { sweepPrivateDirs } from './private-dirs.js';
import { type HeldLock, type LockOptions, isLockHeld, takeLock } from './lock.js';
import { type StoreFs, nodeStoreFs } from './store-fs.js';
import type { StoreEvent, StoreRemote, RemoteObject } from './remote/store-remote.js';
import { io, sealTree } from './tree.js';
import { TreeWriter, type WriteFileOptions } from './writer.js';

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

export interface FillContext {
  /** Aborted when every caller waiting on this acquisition has given up. */
  signal: AbortSignal;
  /**
   * Writes a file at a `/`-separated path under the destination, creating its folders, and
   * hashes it on the way so publication does not read it back. Optional: a fill may write
   * the destination any way it likes.
   */
  writeFile(path: string, data: Uint8Array | string, options?: WriteFileOptions): Promise<void>;
}

/** Writes the tree into `destination`, which does not exist yet. Nothing else may be written. */
export type Fill = (destination: string, context: FillContext) => Promise<void>;

export interface AcquireOptions {
  signal?: AbortSignal;
  /**
   * Checks a staged tree before it is sealed, whether a fill wrote it or the remote did
   * (a skill folder must hold SKILL.md, say). Throwing refuses the tree: from the fill, the
   * acquisition fails with CACHE_FILL_FAILED; from the remote, the fill runs instead.
   */
  check?: (destination: string) => Promise<void>;
  /**
   * Proves that a tree pulled from the remote tier is the content `key.contentId` names,
   * from the tree alone (for git: its files hash to the tree id the origin gave). Runs on
   * the staged, sealed tree, before anything is published; throwing refuses it (a
   * `remote-warning` with code CACHE_REMOTE_UNPROVEN) and the fill runs instead.
   *
   * Without it the remote tier is not used for this acquisition at all: its content is
   * never taken (a registry's markers and digests only show that whoever pushed was
   * consistent, and anyone with push rights can be), and the filled tree is not pushed
   * either, since no other machine could prove it.
   */
  verify?: (tree: string, signal: AbortSignal) => Promise<void>;
}

export interface StoredTree {
  objectId: string;
  /** The object's immutable tree. */
  path: string;
  /** The declaration link: the folder a consumer of this declaration should use. */
  linkPath: string;
  digest: string;
  files: number;
  bytes: number;
  /** True when no fill ran for this call. */
  fromCache: boolean;
  /** Where the tree came from for this call: already in the store, pulled from the remote, or filled from the origin. */
  source: 'store' | 'remote' | 'origin';
}

export interface ObjectMarker {
  format: 1;
  objectId: string;
  provider: string;
  contentId: string;
  /** The key's scope, when it has one: part of the object's identity (see objectIdOf). */
  scope?: string;
  digest: string;
  files: number;
  bytes: number;
}

/** An object id: the sha256 of the content identity (objectIdOf), lower-case hex. */
const OBJECT_ID = /^[0-9a-f]{64}$/;

/**
 * Whether a parsed completion marker is whole and names this object: every field a reader
 * prints, compares or sums has its type, so a marker cut short or edited by hand is refused
 * as corrupt instead of failing later in whoever reads it.
 */
function isMarkerOf(marker: unknown, objectId: string): marker is ObjectMarker {
  if (typeof marker !== 'object' || marker === null) return false;
  const m = marker as Record<string, unknown>;
  const count = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
  return (
    m.format === 1 &&
    m.objectId === objectId &&
    typeof m.provider === 'string' &&
    typeof m.contentId === 'string' &&
    (m.scope === undefined || typeof m.scope === 'string') &&
    typeof m.digest === 'string' &&
    count(m.files) &&
    count(m.bytes)
  );
}

export interface StoreListing {
  objects: ObjectMarker[];
  keys: { key: CacheKey; objectId: string }[];
  links: { name: string; objectId: string | undefined }[];
}

export interface VerifyReport {
  checked: number;
  ok: string[];
  corrupt: { objectId: string; reason: string; quarantinedTo?: string }[];
}

export interface GcReport {
  removedObjects: string[];
  removedKeys: number;
  removedLinks: number;
  removedStaging: number;
  /** Private folders (credentials) of dead preparations, securely removed (see private-dirs.ts). */
  removedPrivate: number;
  freedBytes: number;
}

interface Flight {
  promise: Promise<StoredTree>;
  controller: AbortController;
  waiters: number;
}

/** Thrown inside a remote fill when the remote has no such object: a miss, not a warning. */
const NOT_IN_REMOTE = Symbol('not in remote');

/** Marks a fact this store's callers learned themselves (see recall). */
const FACT_FROM = 'caller';

/** Temporary files older than this were left by a writer that died between write and rename. */
const TEMP_FILE_GRACE_MS = 60_000;

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
  return new ContentStore(layout, fs, options);
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

export class ContentStore {
  readonly root: string;
  /**
   * Where private folders of acquisitions live (`<root>/private`, 0700): one root the store
   * owns, so `gc` finds and securely removes what a killed process left there.
   */
  readonly privateRoot: string;
  private readonly layout: StoreLayout;
  private readonly fs: StoreFs;
  private readonly lockOptions: LockOptions;
  private readonly staleMs: number;
  private readonly syncFiles: boolean;
  private readonly remote: StoreRemote | undefined;
  private readonly onEvent: ((event: StoreEvent) => void) | undefined;
  /** Pushes and fact writes to the remote still in flight (see remoteIdle). */
  private readonly remoteTasks = new Set<Promise<void>>();
  private readonly flights = new Map<string, Flight>();
  private readonly markers = new Map<string, ObjectMarker>();
  private readonly recorded = new Set<string>();
  private lastSweep = 0;
  /** Something was moved to the trash since it was last emptied. */
  private trashed = false;

  constructor(layout: StoreLayout, fs: StoreFs, options: ContentStoreOptions) {
    this.layout = layout;
    this.root = layout.root;
    this.privateRoot = layout.private;
    this.fs = fs;
    this.lockOptions = options.lock ?? {};
    this.staleMs = this.lockOptions.staleMs ?? 10_000;
    this.syncFiles = options.syncFiles ?? false;
    this.remote = options.remote;
    this.onEvent = options.onEvent;
  }

  /**
   * Returns the tree stored for `key`, running `fill` only on a miss. The fill gets an
   * absent destination inside a fresh staging folder; what it leaves there is checked,
   * sealed and published by one rename, then the key record and the declaration link are
   * written. A fill that throws or is aborted publishes nothing and leaves nothing behind.
   * Identical acquisitions in one process share one fill.
   */
  acquire(key: CacheKey, fill: Fill, options: AcquireOptions = {}): Promise<StoredTree> {
    let keyText: string;
    try {
      keyText = canonicalKey(key);
    } catch (error) {
      return Promise.reject(error);
    }
    if (options.signal?.aborted) return Promise.reject(new AcquisitionAbortedError(options.signal.reason));
    const digest = sha256Hex(keyText);
    let flight = this.flights.get(digest);
    if (!flight) {
      const controller = new AbortController();
      const promise = this.acquireOnce(
        key,
        keyText,
        digest,
        fill,
        controller.signal,
        options.check,
        options.verify,
      ).finally(() => {
        if (this.flights.get(digest) === flight) this.flights.delete(digest);
      });
      flight = { promise, controller, waiters: 0 };
      this.flights.set(digest, flight);
    }
    return this.join(digest, flight, options.signal);
  }

  /**
   * Attaches one caller to a shared acquisition. A caller that aborts leaves at once while
   * others still wait; the last one to abort cancels the fill and receives the outcome only
   * after cleanup, so it never sees a staging folder still being removed.
   */
  private join(digest: string, flight: Flight, signal: AbortSignal | undefined): Promise<StoredTree> {
    flight.waiters += 1;
    if (!signal) return flight.promise;
    return new Promise<StoredTree>((resolve, reject) => {
      let left = false;
      const onAbort = () => {
        flight.waiters -= 1;
        if (flight.waiters > 0) {
          left = true;
          reject(new AcquisitionAbortedError(signal.reason));
          return;
        }
        // A later acquisition of the same key must not join a cancelled one.
        if (this.flights.get(digest) === flight) this.flights.delete(digest);
        flight.controller.abort(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          if (!left) resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          if (!left) reject(error);
        },
      );
    });
  }

  /**
   * The tree stored for `key`, or undefined. Reads two small files and a link; never walks
   * the tree. It answers only once the declaration link is in place too (the key record is
   * written first, the link right after), so the `linkPath` it returns is always there.
   */
  async lookup(key: CacheKey): Promise<StoredTree | undefined> {
    const keyText = canonicalKey(key);
    const objectId = objectIdOf(key);
    const marker = await this.presentMarker(objectId);
    if (!marker || !(await this.isRecorded(sha256Hex(keyText), keyText))) return undefined;
    if (!(await this.linkExists(key))) return undefined;
    return this.treeOf(key, marker, 'store');
  }

  private async linkExists(key: CacheKey): Promise<boolean> {
    try {
      await this.fs.lstat(this.linkPathOf(key));
      return true;
    } catch {
      return false;
    }
  }

  /** Where the declaration link of `key`'s declaration lives (it may not exist yet). */
  linkPathOf(key: Pick<CacheKey, 'provider' | 'declaration'>): string {
    return this.layout.link(declarationDigest(key));
  }

  private async acquireOnce(
    key: CacheKey,
    keyText: string,
    digest: string,
    fill: Fill,
    signal: AbortSignal,
    check?: (destination: string) => Promise<void>,
    verify?: AcquireOptions['verify'],
  ): Promise<StoredTree> {
    // The object id follows from the key, so a hit needs no key record read: only proof
    // that the object is still there, and the declaration link checked in the same turn.
    const objectId = objectIdOf(key);
    const [marker, linked] = await Promise.all([this.presentMarker(objectId), this.linkPointsAt(key, objectId)]);
    if (marker) {
      if (await this.isRecorded(digest, keyText)) {
        if (!linked) await this.pointLink(key, objectId);
        return this.treeOf(key, marker, 'store');
      }
      // Another key with the same content identity already published this tree: no fill
      // needed. Checked again under the lock, since gc may have collected it meanwhile.
      const adopted = await this.withPublishLock(async () => {
        const still = await this.readMarker(objectId);
        return still && this.record(key, keyText, digest, still, 'store');
      });
      if (adopted) return adopted;
      this.markers.delete(objectId);
    }
    // Only what can be proven is taken from the remote tier, or given to it.
    if (this.remote && verify) {
      const pulled = await this.pullFromRemote(this.remote, key, keyText, digest, objectId, signal, check, verify);
      if (pulled) return pulled;
    }
    const tree = await this.fillAndPublish(key, keyText, digest, objectId, withCheck(fill, check), signal, 'origin');
    if (this.remote && verify && tree.source === 'origin') this.pushToRemote(this.remote, key, tree);
    return tree;
  }

  /**
   * Tries the remote tier for an object missing here. What it sends goes through the same
   * path as a fill (staging, the check, sealing, one rename), and is published only when
   * the tree's digest, file count and bytes equal the marker the remote claims, and then
   * only once `verify` proved the sealed tree to be the content the key names. The marker
   * check catches damage; only the proof catches a writer that lies consistently. Any
   * failure of the remote is a warning event and undefined, so the caller's fill runs
   * instead; only the caller's own cancellation is thrown.
   */
  private async pullFromRemote(
    remote: StoreRemote,
    key: CacheKey,
    keyText: string,
    digest: string,
    objectId: string,
    signal: AbortSignal,
    check: ((destination: string) => Promise<void>) | undefined,
    verify: NonNullable<AcquireOptions['verify']>,
  ): Promise<StoredTree | undefined> {
    let claim: RemoteObject | undefined;
    const pull: Fill = async (destination, context) => {
      claim = await remote.pull(objectId, destination, context);
      if (!claim) throw NOT_IN_REMOTE;
    };
    const prove = async (tree: string) => {
      try {
        await verify(tree, signal);
      } catch (error) {
        if (signal.aborted) throw new AcquisitionAbortedError(signal.reason);
        throw new RemoteUnprovenError(
          objectId,
          key.contentId,
          error instanceof Error ? error.message : String(error),
          error,
        );
      }
    };
    try {
      const tree = await this.fillAndPublish(
        key,
        keyText,
        digest,
        objectId,
        withCheck(pull, check),
        signal,
        'remote',
        () => claim?.marker,
        prove,
      );
      if (tree.source === 'remote')
        this.emit({ type: 'remote-hit', objectId, remote: remote.label, files: tree.files, bytes: tree.bytes });
      return tree;
    } catch (error) {
      if (signal.aborted) throw error;
      const cause = error instanceof FillFailedError ? error.cause : error;
      if (cause === NOT_IN_REMOTE) this.emit({ type: 'remote-miss', objectId, remote: remote.label });
      else this.warn(remote, 'pull', objectId, cause);
      return undefined;
    }
  }

  /** After a fill from the origin: the tree goes to the remote in the background. */
  private pushToRemote(remote: StoreRemote, key: CacheKey, tree: StoredTree): void {
    const marker = this.markers.get(tree.objectId);
    if (!marker) return;
    this.track(
      remote.push({ key, marker, path: tree.path }).then(
        () => this.emit({ type: 'remote-pushed', objectId: tree.objectId, remote: remote.label }),
        (error: unknown) => this.warn(remote, 'push', tree.objectId, error),
      ),
    );
  }

  /**
   * Pushes what the store holds for `key` to the remote now, and waits for it (the CLI's
   * `cache push`). Unlike background pushes, a failure is thrown. False when the key is
   * not in the store.
   */
  async push(key: CacheKey, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    if (!this.remote) throw new TypeError('this store has no remote');
    const tree = await this.lookup(key);
    const marker = tree && (await this.presentMarker(tree.objectId));
    if (!tree || !marker) return false;
    await this.remote.push({ key, marker, path: tree.path }, options.signal);
    this.emit({ type: 'remote-pushed', objectId: tree.objectId, remote: this.remote.label });
    return true;
  }

  /** Resolves once every background push and fact write to the remote has finished (or failed and been reported). */
  async remoteIdle(): Promise<void> {
    while (this.remoteTasks.size > 0) await Promise.all([...this.remoteTasks]);
  }

  private track(task: Promise<void>): void {
    const tracked = task.finally(() => this.remoteTasks.delete(tracked));
    this.remoteTasks.add(tracked);
  }

  private warn(
    remote: StoreRemote,
    operation: 'pull' | 'push' | 'recall' | 'remember',
    subject: string,
    error: unknown,
  ): void {
    const code =
      typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'REMOTE_FAILED';
    const message = error instanceof Error ? error.message : String(error);
    this.emit({ type: 'remote-warning', remote: remote.label, operation, subject, code, message });
  }

  private emit(event: StoreEvent): void {
    try {
      this.onEvent?.(event);
    } catch {
      // A listener's failure is not the acquisition's.
    }
  }

  /**
   * The marker of a published object, or undefined. Objects are immutable, so a marker read
   * once is remembered; later calls only check that the object was not collected since.
   */
  private async presentMarker(objectId: string): Promise<ObjectMarker | undefined> {
    const known = this.markers.get(objectId);
    if (known) {
      try {
        await this.fs.lstat(this.layout.marker(objectId));
        return known;
      } catch {
        this.markers.delete(objectId);
      }
    }
    const marker = await this.readMarker(objectId);
    if (marker) this.markers.set(objectId, marker);
    return marker;
  }

  /** Whether a key record for this key exists; remembered, since a record only ever names one object. */
  private async isRecorded(digest: string, keyText: string): Promise<boolean> {
    if (this.recorded.has(digest)) return true;
    const path = this.layout.key(digest);
    let text: string;
    try {
      text = await this.fs.readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new StoreIOError('read key record', path, error);
    }
    try {
      const record = JSON.parse(text) as { key?: unknown };
      if (canonicalJson(record.key) !== keyText) return false;
    } catch {
      return false; // A record damaged by hand is a miss; the next publication rewrites it.
    }
    this.recorded.add(digest);
    return true;
  }

  private async linkPointsAt(key: CacheKey, objectId: string): Promise<boolean> {
    try {
      return (await this.fs.readlink(this.linkPathOf(key))) === this.layout.linkTarget(objectId);
    } catch {
      return false;
    }
  }

  private async fillAndPublish(
    key: CacheKey,
    keyText: string,
    digest: string,
    objectId: string,
    fill: Fill,
    signal: AbortSignal,
    source: 'remote' | 'origin',
    expected?: () => ObjectMarker | undefined,
    prove?: (tree: string) => Promise<void>,
  ): Promise<StoredTree> {
    const staging = await this.openStaging();
    let published = false;
    try {
      throwIfAborted(signal);
      const destination = join(staging.dir, CONTENT);
      const writer = new TreeWriter(this.fs, destination);
      try {
        await fill(destination, { signal, writeFile: (path, data, options) => writer.writeFile(path, data, options) });
      } catch (error) {
        if (signal.aborted) throw new AcquisitionAbortedError(signal.reason);
        throw new FillFailedError(error);
      }
      throwIfAborted(signal);
      await this.assertOnlyDestination(staging.dir);
      const summary = await sealTree(this.fs, destination, {
        normalize: true,
        syncFiles: this.syncFiles,
        known: writer.known,
      });
      const claim = expected?.();
      if (
        expected &&
        (!claim || claim.digest !== summary.digest || claim.files !== summary.files || claim.bytes !== summary.bytes)
      ) {
        throw new RemoteMismatchError(objectId, claim, summary);
      }
      // After sealing, on the very files the rename below publishes (modes normalised).
      if (prove) await prove(destination);
      throwIfAborted(signal);
      const marker: ObjectMarker = {
        format: 1,
        objectId,
        provider: key.provider,
        contentId: key.contentId,
        ...(key.scope === undefined ? {} : { scope: key.scope }),
        ...summary,
      };
      // The marker is written inside the staged folder, so the one rename below publishes the
      // tree and its marker together: an object without a marker can never be seen.
      await io('write completion marker', join(staging.dir, MARKER), () =>
        this.fs.writeFile(join(staging.dir, MARKER), `${JSON.stringify(marker)}\n`, { flag: 'wx', mode: 0o644 }),
      );
      if (this.syncFiles) await this.syncPath(join(staging.dir, MARKER));
      await io('set mode', staging.dir, () => this.fs.chmod(staging.dir, 0o755));
      throwIfAborted(signal);
      staging.lock.assertHeld();

      return await this.withPublishLock(async (lock) => {
        // Check again under the lock: another writer may have published while we filled.
        let theirs = await this.readMarker(objectId);
        if (!theirs) {
          throwIfAborted(signal);
          lock.assertHeld();
          staging.lock.assertHeld();
          try {
            await this.fs.rename(staging.dir, this.layout.object(objectId));
            published = true;
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code !== 'ENOTEMPTY' && code !== 'EEXIST')
              throw new StoreIOError('publish object', this.layout.object(objectId), error);
            // The target exists, so another writer won the race without the lock: use
            // theirs, but only once its marker proves it complete.
            theirs = await this.readMarker(objectId);
            if (!theirs)
              throw new CorruptObjectError(
                objectId,
                this.layout.object(objectId),
                'the object has no completion marker',
              );
          }
          if (published && this.syncFiles) await this.syncPath(this.layout.objects);
        }
        return this.record(key, keyText, digest, theirs ?? marker, theirs !== undefined ? 'store' : source);
      });
    } finally {
      // Before the commit point nothing of ours is visible; the staging folder goes.
      if (!published) await this.fs.rm(staging.dir, { recursive: true, force: true }).catch(() => undefined);
      await staging.lock.release().catch(() => undefined);
    }
  }

  /**
   * Writes the key record and points the declaration link at the object. Runs after the
   * object is complete and visible, so a failure here leaves a complete object that the
   * next acquisition of the same content adopts without a fill. The key record comes first:
   * it is what keeps the object from gc, so no link (not even a writer's temporary one) can
   * point at an object that nothing else holds. `lookup` waits for the link as well.
   */
  private async record(
    key: CacheKey,
    keyText: string,
    digest: string,
    marker: ObjectMarker,
    source: StoredTree['source'],
  ): Promise<StoredTree> {
    try {
      await this.writeAtomically(
        this.layout.keys,
        this.layout.key(digest),
        `{"objectId":${JSON.stringify(marker.objectId)},"key":${keyText}}\n`,
      );
      await this.pointLink(key, marker.objectId);
    } catch (error) {
      if (error instanceof StoreIOError) throw new StoreIOError(error.step, error.path ?? this.root, error.cause, true);
      throw error;
    }
    this.recorded.add(digest);
    this.markers.set(marker.objectId, marker);
    // Housekeeping: a failure here must not fail an acquisition that already succeeded.
    await this.sweepDeadWriters(false).catch(() => undefined);
    return this.treeOf(key, marker, source);
  }

  private treeOf(key: CacheKey, marker: ObjectMarker, source: StoredTree['source']): StoredTree {
    const { objectId, digest, files, bytes } = marker;
    return {
      objectId,
      path: this.layout.content(objectId),
      linkPath: this.linkPathOf(key),
      digest,
      files,
      bytes,
      fromCache: source !== 'origin',
      source,
    };
  }

  /**
   * Points the declaration link at an object, which is published already (so a failure is
   * reported as `committed`). The new link is made under a temporary name and renamed over
   * the old one: rename replaces atomically, so once a link exists a reader always finds
   * one, pointing at a complete tree.
   */
  private async pointLink(key: CacheKey, objectId: string): Promise<void> {
    const link = this.linkPathOf(key);
    const target = this.layout.linkTarget(objectId);
    const temp = join(this.layout.links, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
    try {
      await io('write declaration link', temp, () => this.fs.symlink(target, temp));
      await io('replace declaration link', link, () => this.fs.rename(temp, link));
    } catch (error) {
      await this.fs.rm(temp, { force: true }).catch(() => undefined);
      if (error instanceof StoreIOError) throw new StoreIOError(error.step, link, error.cause, true);
      throw error;
    }
  }

  /**
   * Remembers a small fact that never changes once true (the tree id of a directory at a
   * commit, say), so a later call in any process can skip the work of finding it again.
   * Never a secret: facts are plain files. Written to a temporary name and renamed, so a
   * reader sees the whole value or none; writing a name again replaces it with what must
   * be the same value.
   */
  async remember(name: string, value: string): Promise<void> {
    if (typeof name !== 'string' || typeof value !== 'string')
      throw new TypeError('remember(name, value) takes two strings');
    await this.writeAtomically(
      this.layout.facts,
      this.layout.fact(sha256Hex(name)),
      `${JSON.stringify({ name, value, from: FACT_FROM })}\n`,
      'fact',
    );
    const remote = this.remote;
    if (remote)
      this.track(
        this.shareFact(remote, name, value).catch((error: unknown) => this.warn(remote, 'remember', name, error)),
      );
  }

  /**
   * Gives the remote a fact this store learned, unless it holds that value already. The
   * remote's value is never believed (any writer can put one there): one that differs is
   * reported as CACHE_REMOTE_FACT_MISMATCH and replaced with ours.
   */
  private async shareFact(remote: StoreRemote, name: string, value: string): Promise<void> {
    const theirs = await remote.recall(name);
    if (theirs === value) return;
    if (theirs !== undefined) this.warn(remote, 'remember', name, new RemoteFactMismatchError(name, theirs, value));
    await remote.remember(name, value);
  }

  /**
   * A fact `remember` stored under `name` in this store, or undefined. A damaged or foreign
   * file is a miss. Never asks the remote: a fact decides what content is taken (a git
   * tree id becomes the content id a pulled tree is proven against), so only what this
   * store's own callers learned from the origin counts.
   */
  async recall(name: string): Promise<string | undefined> {
    return this.recallLocal(name);
  }

  private async recallLocal(name: string): Promise<string | undefined> {
    let text: string;
    try {
      text = await this.fs.readFile(this.layout.fact(sha256Hex(name)), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new StoreIOError('read fact', this.layout.fact(sha256Hex(name)), error);
    }
    try {
      const record = JSON.parse(text) as { name?: unknown; value?: unknown; from?: unknown };
      // Earlier versions also kept facts recalled from the remote here, without a `from`:
      // those are misses, so nothing a registry once said is believed.
      return record.name === name && typeof record.value === 'string' && record.from === FACT_FROM
        ? record.value
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** Write to a temporary name, then rename: readers see the old file or the whole new one. */
  private async writeAtomically(folder: string, path: string, text: string, what = 'key record'): Promise<void> {
    const temp = join(folder, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
    try {
      await io(`write ${what}`, temp, () => this.fs.writeFile(temp, text, { flag: 'wx', mode: 0o644 }));
      if (this.syncFiles) await this.syncPath(temp);
      await io(`replace ${what}`, path, () => this.fs.rename(temp, path));
    } catch (error) {
      await this.fs.rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  private async syncPath(path: string): Promise<void> {
    await io('sync', path, async () => {
      const handle = await this.fs.open(path, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  }

  private async readMarker(objectId: string): Promise<ObjectMarker | undefined> {
    const path = this.layout.marker(objectId);
    let text: string;
    try {
      text = await this.fs.readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw new StoreIOError('read completion marker', path, error);
    }
    try {
      const marker = JSON.parse(text) as ObjectMarker;
      if (!isMarkerOf(marker, objectId)) throw new Error('unexpected fields');
      return marker;
    } catch (error) {
      throw new CorruptObjectError(objectId, path, 'its completion marker is unreadable', error);
    }
  }

  /** A staging folder and its liveness lock; the lock is taken first so no folder is ever unowned. */
  private async openStaging(): Promise<{ dir: string; lock: HeldLock }> {
    const dir = join(this.layout.staging, randomBytes(12).toString('hex'));
    const lock = await takeLock(dir, `${dir}.lock`, this.lockOptions, false);
    try {
      // 0700: nobody else may write into a tree while it is filled and sealed (swap a folder
      // of it for a link between a check and a write); publication opens it to 0755.
      await io('create staging folder', dir, () => this.fs.mkdir(dir, { mode: 0o700 }));
    } catch (error) {
      await lock.release().catch(() => undefined);
      throw error;
    }
    return { dir, lock };
  }

  private async assertOnlyDestination(stagingDir: string): Promise<void> {
    const names = await io('read staging folder', stagingDir, () => this.fs.readdir(stagingDir));
    const stray = names.find((name) => name !== CONTENT);
    if (stray !== undefined) throw new FillOutsideDestinationError(join(stagingDir, stray));
    if (names.length === 0)
      throw new UnsafeTreeError('missing-destination', '.', 'the fill did not create its destination');
  }

  private async withPublishLock<T>(run: (lock: HeldLock) => Promise<T>): Promise<T> {
    const lock = await takeLock(this.layout.objects, this.layout.publishLock, this.lockOptions, true);
    try {
      return await run(lock);
    } finally {
      await lock.release().catch(() => undefined);
      // Only when this publication moved something there: most publish nothing to delete.
      if (this.trashed) await this.emptyTrash();
    }
  }

  /**
   * Moves the staging folders of dead writers to the trash. Only under the publication
   * lock: a folder is dead when its liveness lock is absent or stale, and the lock keeps
   * two sweepers from racing over the same folder. Runs at most once per stale period
   * unless forced (gc).
   */
  private async sweepDeadWriters(force: boolean): Promise<number> {
    const now = Date.now();
    if (!force && now - this.lastSweep < this.staleMs) return 0;
    this.lastSweep = now;
    const names = await io('read staging folder', this.layout.staging, () => this.fs.readdir(this.layout.staging));
    const owners = new Set(names.map((name) => name.replace(/\.lock$/, '')));
    let removed = 0;
    for (const owner of owners) {
      const dir = join(this.layout.staging, owner);
      if (await isLockHeld(dir, `${dir}.lock`, this.staleMs)) continue;
      await this.moveToTrash(dir);
      await this.fs.rm(`${dir}.lock`, { recursive: true, force: true }).catch(() => undefined);
      removed += names.includes(owner) ? 1 : 0;
    }
    return removed;
  }

  /** One rename takes a folder out of sight; deleting its files can then happen at leisure. */
  private async moveToTrash(path: string): Promise<boolean> {
    try {
      await this.fs.rename(path, join(this.layout.trash, randomBytes(12).toString('hex')));
      this.trashed = true;
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new StoreIOError('move to trash', path, error);
    }
  }

  private async emptyTrash(): Promise<void> {
    this.trashed = false;
    let names: string[];
    try {
      names = await this.fs.readdir(this.layout.trash);
    } catch {
      return;
    }
    await Promise.all(
      names.map((name) =>
        this.fs.rm(join(this.layout.trash, name), { recursive: true, force: true }).catch(() => undefined),
      ),
    );
  }

  /** Every object, key and declaration link in the store. */
  async list(): Promise<StoreListing> {
    const objects: ObjectMarker[] = [];
    for (const id of await this.readFolder(this.layout.objects)) {
      const marker = await this.readMarker(id).catch(() => undefined);
      if (marker) objects.push(marker);
    }
    const keys: StoreListing['keys'] = [];
    for (const name of await this.readFolder(this.layout.keys)) {
      if (name.startsWith(TEMP_PREFIX)) continue;
      try {
        const record = JSON.parse(await this.fs.readFile(join(this.layout.keys, name), 'utf8')) as {
          objectId?: unknown;
          key?: unknown;
        };
        // Listed only when whole: a key of the right shape that files under this very name
        // (keyDigest refuses any other shape), naming an object id. A caller prints and
        // compares these fields, so a record cut short or edited by hand must not reach it.
        if (
          typeof record !== 'object' ||
          record === null ||
          typeof record.objectId !== 'string' ||
          !OBJECT_ID.test(record.objectId)
        )
          continue;
        if (`${keyDigest(record.key as CacheKey)}.json` !== name) continue;
        keys.push({ key: record.key as CacheKey, objectId: record.objectId });
      } catch {
        // A record that vanished or was damaged by hand is not listed; gc removes it.
      }
    }
    const links: StoreListing['links'] = [];
    for (const name of await this.readFolder(this.layout.links)) {
      if (name.startsWith(TEMP_PREFIX)) continue;
      const target = await this.fs.readlink(join(this.layout.links, name)).catch(() => '');
      links.push({ name, objectId: this.layout.objectIdOfLinkTarget(target) });
    }
    return { objects, keys, links };
  }

  /**
   * Re-hashes every object against its marker. With `quarantine`, corrupt objects are moved
   * to quarantine/ and the keys that led to them are removed, so the next acquisition
   * fetches the content again; declaration links to them are replaced by that acquisition
   * (or removed by gc).
   */
  async verify(options: { quarantine?: boolean } = {}): Promise<VerifyReport> {
    const report: VerifyReport = { checked: 0, ok: [], corrupt: [] };
    for (const objectId of await this.readFolder(this.layout.objects)) {
      report.checked += 1;
      const problem = await this.checkObject(objectId);
      if (problem === undefined) report.ok.push(objectId);
      else report.corrupt.push({ objectId, reason: problem });
    }
    if (options.quarantine && report.corrupt.length > 0) {
      await this.withPublishLock(async () => {
        const bad = new Set(report.corrupt.map((c) => c.objectId));
        for (const entry of report.corrupt) {
          const to = join(this.layout.quarantine, `${entry.objectId}-${randomBytes(4).toString('hex')}`);
          await io('quarantine object', this.layout.object(entry.objectId), () =>
            this.fs.rename(this.layout.object(entry.objectId), to),
          );
          entry.quarantinedTo = to;
        }
        for (const { path, objectId } of await this.readKeyObjects()) {
          if (bad.has(objectId)) await this.fs.rm(path, { force: true });
        }
      });
    }
    return report;
  }

  private async checkObject(objectId: string): Promise<string | undefined> {
    let marker: ObjectMarker | undefined;
    try {
      marker = await this.readMarker(objectId);
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    if (!marker) return 'the completion marker is missing';
    try {
      const now = await sealTree(this.fs, this.layout.content(objectId), { normalize: false });
      if (now.digest !== marker.digest)
        return `content digest ${now.digest} differs from the marker's ${marker.digest}`;
      if (now.files !== marker.files || now.bytes !== marker.bytes) return 'file count or size differs from the marker';
    } catch (error) {
      if (error instanceof ContentCacheError) return error.message;
      throw error;
    }
    return undefined;
  }

  /**
   * Removes objects that no key record or declaration link reaches, keys and links whose
   * object is gone, staging folders of dead writers, and temporary files they left. Holds
   * the publication lock throughout, so nothing it judges unreachable is being published.
   */
  async gc(): Promise<GcReport> {
    const report: GcReport = {
      removedObjects: [],
      removedKeys: 0,
      removedLinks: 0,
      removedStaging: 0,
      removedPrivate: 0,
      freedBytes: 0,
    };
    await this.withPublishLock(async () => {
      const objects = new Set(await this.readFolder(this.layout.objects));
      const reached = new Set<string>();
      for (const { path, objectId } of await this.readKeyObjects()) {
        if (objects.has(objectId)) reached.add(objectId);
        else if (await this.removeFile(path)) report.removedKeys += 1;
      }
      for (const name of await this.readFolder(this.layout.links)) {
        const path = join(this.layout.links, name);
        if (name.startsWith(TEMP_PREFIX)) {
          await this.removeIfOld(path);
          continue;
        }
        const objectId = this.layout.objectIdOfLinkTarget(await this.fs.readlink(path).catch(() => ''));
        if (objectId && objects.has(objectId)) reached.add(objectId);
        else if (await this.removeFile(path)) report.removedLinks += 1;
      }
      for (const objectId of objects) {
        if (reached.has(objectId)) continue;
        const marker = await this.readMarker(objectId).catch(() => undefined);
        if (await this.moveToTrash(this.layout.object(objectId))) {
          report.removedObjects.push(objectId);
          report.freedBytes += marker?.bytes ?? 0;
        }
      }
      for (const name of await this.readFolder(this.layout.keys)) {
        if (name.startsWith(TEMP_PREFIX)) await this.removeIfOld(join(this.layout.keys, name));
      }
      report.removedStaging = await this.sweepDeadWriters(true);
    });
    // Also what processes that died before emptying it left in the trash.
    await this.emptyTrash();
    // Credentials of preparations that were killed: never those of a live one (the owner
    // record names a running process), whatever the publication lock says.
    report.removedPrivate = await sweepPrivateDirs(this.layout.private);
    return report;
  }

  /** Key record files with the object each names; temporary and unreadable ones are skipped. */
  private async readKeyObjects(): Promise<{ path: string; objectId: string }[]> {
    const found: { path: string; objectId: string }[] = [];
    for (const name of await this.readFolder(this.layout.keys)) {
      if (name.startsWith(TEMP_PREFIX)) continue;
      const path = join(this.layout.keys, name);
      try {
        const record = JSON.parse(await this.fs.readFile(path, 'utf8')) as { objectId?: unknown };
        found.push({ path, objectId: typeof record.objectId === 'string' ? record.objectId : '' });
      } catch {
        found.push({ path, objectId: '' });
      }
    }
    return found;
  }

  private async readFolder(folder: string): Promise<string[]> {
    return (await io('read store folder', folder, () => this.fs.readdir(folder))).sort();
  }

  private async removeFile(path: string): Promise<boolean> {
    await io('remove', path, () => this.fs.rm(path, { force: true }));
    return true;
  }

  private async removeIfOld(path: string): Promise<void> {
    const stat = await this.fs.lstat(path).catch(() => undefined);
    if (stat && Date.now() - stat.mtimeMs > TEMP_FILE_GRACE_MS)
      await this.fs.rm(path, { force: true }).catch(() => undefined);
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AcquisitionAbortedError(signal.reason);
}

/** The fill, then the caller's check of what it wrote (both inside the fill, so a failure of either is a fill failure). */
function withCheck(fill: Fill, check: ((destination: string) => Promise<void>) | undefined): Fill {
  if (!check) return fill;
  return async (destination, context) => {
    await fill(destination, context);
    await check(destination);
  };
}
