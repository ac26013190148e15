import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type CacheKey, declarationDigest } from '../canonical-key.js';
import {
  AcquisitionAbortedError,
  CorruptObjectError,
  FillFailedError,
  FillOutsideDestinationError,
  RemoteMismatchError,
  StoreIOError,
  UnsafeTreeError,
} from '../errors.js';
import { CONTENT, MARKER, TEMP_PREFIX } from '../layout.js';
import { type HeldLock, takeLock } from '../lock.js';
import { io, sealTree } from '../tree.js';
import { TreeWriter, type WriteFileOptions } from '../writer.js';
import type { StoreCore } from './core.js';
import type { ObjectMarker } from './marker.js';

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

/** Where the declaration link of `key`'s declaration lives (it may not exist yet). */
export function linkPathOf(core: StoreCore, key: Pick<CacheKey, 'provider' | 'declaration'>): string {
  return core.layout.link(declarationDigest(key));
}

export async function fillAndPublish(
  core: StoreCore,
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
  const staging = await openStaging(core);
  let published = false;
  try {
    throwIfAborted(signal);
    const destination = join(staging.dir, CONTENT);
    const writer = new TreeWriter(core.fs, destination);
    try {
      await fill(destination, { signal, writeFile: (path, data, options) => writer.writeFile(path, data, options) });
    } catch (error) {
      if (signal.aborted) throw new AcquisitionAbortedError(signal.reason);
      throw new FillFailedError(error);
    }
    throwIfAborted(signal);
    await assertOnlyDestination(core, staging.dir);
    const summary = await sealTree(core.fs, destination, {
      normalize: true,
      syncFiles: core.syncFiles,
      known: writer.known(),
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
      core.fs.writeFile(join(staging.dir, MARKER), `${JSON.stringify(marker)}\n`, { flag: 'wx', mode: 0o644 }),
    );
    if (core.syncFiles) await core.syncPath(join(staging.dir, MARKER));
    await io('set mode', staging.dir, () => core.fs.chmod(staging.dir, 0o755));
    throwIfAborted(signal);
    staging.lock.assertHeld();

    return await core.withPublishLock(async (lock) => {
      // Check again under the lock: another writer may have published while we filled.
      let theirs = await core.readMarker(objectId);
      if (!theirs) {
        throwIfAborted(signal);
        lock.assertHeld();
        staging.lock.assertHeld();
        try {
          await core.fs.rename(staging.dir, core.layout.object(objectId));
          published = true;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code !== 'ENOTEMPTY' && code !== 'EEXIST')
            throw new StoreIOError('publish object', core.layout.object(objectId), error);
          // The target exists, so another writer won the race without the lock: use
          // theirs, but only once its marker proves it complete.
          theirs = await core.readMarker(objectId);
          if (!theirs)
            throw new CorruptObjectError(objectId, core.layout.object(objectId), 'the object has no completion marker');
        }
        if (published && core.syncFiles) await core.syncPath(core.layout.objects);
      }
      return record(core, key, keyText, digest, theirs ?? marker, theirs !== undefined ? 'store' : source);
    });
  } finally {
    // Before the commit point nothing of ours is visible; the staging folder goes.
    if (!published) await core.fs.rm(staging.dir, { recursive: true, force: true }).catch(() => undefined);
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
export async function record(
  core: StoreCore,
  key: CacheKey,
  keyText: string,
  digest: string,
  marker: ObjectMarker,
  source: StoredTree['source'],
): Promise<StoredTree> {
  try {
    await core.writeAtomically(
      core.layout.keys,
      core.layout.key(digest),
      `{"objectId":${JSON.stringify(marker.objectId)},"key":${keyText}}\n`,
    );
    await pointLink(core, key, marker.objectId);
  } catch (error) {
    if (error instanceof StoreIOError) throw new StoreIOError(error.step, error.path ?? core.root, error.cause, true);
    throw error;
  }
  core.recorded.add(digest);
  core.markers.set(marker.objectId, marker);
  // Housekeeping: a failure here must not fail an acquisition that already succeeded.
  await core.sweepDeadWriters(false).catch(() => undefined);
  return treeOf(core, key, marker, source);
}

export function treeOf(core: StoreCore, key: CacheKey, marker: ObjectMarker, source: StoredTree['source']): StoredTree {
  const { objectId, digest, files, bytes } = marker;
  return {
    objectId,
    path: core.layout.content(objectId),
    linkPath: linkPathOf(core, key),
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
export async function pointLink(core: StoreCore, key: CacheKey, objectId: string): Promise<void> {
  const link = linkPathOf(core, key);
  const target = core.layout.linkTarget(objectId);
  const temp = join(core.layout.links, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
  try {
    await io('write declaration link', temp, () => core.fs.symlink(target, temp));
    await io('replace declaration link', link, () => core.fs.rename(temp, link));
  } catch (error) {
    await core.fs.rm(temp, { force: true }).catch(() => undefined);
    if (error instanceof StoreIOError) throw new StoreIOError(error.step, link, error.cause, true);
    throw error;
  }
}

/** A staging folder and its liveness lock; the lock is taken first so no folder is ever unowned. */
async function openStaging(core: StoreCore): Promise<{ dir: string; lock: HeldLock }> {
  const dir = join(core.layout.staging, randomBytes(12).toString('hex'));
  const lock = await takeLock(dir, `${dir}.lock`, core.lockOptions, false);
  try {
    // 0700: nobody else may write into a tree while it is filled and sealed (swap a folder
    // of it for a link between a check and a write); publication opens it to 0755.
    await io('create staging folder', dir, () => core.fs.mkdir(dir, { mode: 0o700 }));
  } catch (error) {
    await lock.release().catch(() => undefined);
    throw error;
  }
  return { dir, lock };
}

async function assertOnlyDestination(core: StoreCore, stagingDir: string): Promise<void> {
  const names = await io('read staging folder', stagingDir, () => core.fs.readdir(stagingDir));
  const stray = names.find((name) => name !== CONTENT);
  if (stray !== undefined) throw new FillOutsideDestinationError(join(stagingDir, stray));
  if (names.length === 0)
    throw new UnsafeTreeError('missing-destination', '.', 'the fill did not create its destination');
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AcquisitionAbortedError(signal.reason);
}

/** The fill, then the caller's check of what it wrote (both inside the fill, so a failure of either is a fill failure). */
export function withCheck(fill: Fill, check: ((destination: string) => Promise<void>) | undefined): Fill {
  if (!check) return fill;
  return async (destination, context) => {
    await fill(destination, context);
    await check(destination);
  };
}
