import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { NotInsideError } from '@agentproto/fs-inside';
import { type CacheKey, keyDigest } from '../canonical-key.js';
import { ContentCacheError } from '../errors.js';
import { TEMP_PREFIX } from '../layout.js';
import { sweepPrivateDirs } from '../private-dirs.js';
import { io, sealTree } from '../tree.js';
import type { StoreCore } from './core.js';
import type { ObjectMarker } from './marker.js';

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

/** An object id: the sha256 of the content identity (objectIdOf), lower-case hex. */
const OBJECT_ID = /^[0-9a-f]{64}$/;

/** Temporary files older than this were left by a writer that died between write and rename. */
const TEMP_FILE_GRACE_MS = 60_000;

/** See ContentStore.list. */
export async function listStore(core: StoreCore): Promise<StoreListing> {
  const objects: ObjectMarker[] = [];
  for (const id of await core.readFolder(core.layout.objects)) {
    const marker = await core.readMarker(id).catch(() => undefined);
    if (marker) objects.push(marker);
  }
  const keys: StoreListing['keys'] = [];
  for (const name of await core.readFolder(core.layout.keys)) {
    if (name.startsWith(TEMP_PREFIX)) continue;
    try {
      const record = JSON.parse(await core.fs.readFile(join(core.layout.keys, name), 'utf8')) as {
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
  for (const name of await core.readFolder(core.layout.links)) {
    if (name.startsWith(TEMP_PREFIX)) continue;
    const target = await core.fs.readlink(join(core.layout.links, name)).catch(() => '');
    links.push({ name, objectId: core.layout.objectIdOfLinkTarget(target) });
  }
  return { objects, keys, links };
}

/** See ContentStore.verify. */
export async function verifyStore(core: StoreCore, options: { quarantine?: boolean }): Promise<VerifyReport> {
  const report: VerifyReport = { checked: 0, ok: [], corrupt: [] };
  for (const objectId of await core.readFolder(core.layout.objects)) {
    report.checked += 1;
    const problem = await checkObject(core, objectId);
    if (problem === undefined) report.ok.push(objectId);
    else report.corrupt.push({ objectId, reason: problem });
  }
  if (options.quarantine && report.corrupt.length > 0) {
    await core.withPublishLock(async () => {
      const bad = new Set(report.corrupt.map((c) => c.objectId));
      for (const entry of report.corrupt) {
        const to = join(core.layout.quarantine, `${entry.objectId}-${randomBytes(4).toString('hex')}`);
        await io('quarantine object', core.layout.object(entry.objectId), () =>
          core.fs.rename(core.layout.object(entry.objectId), to),
        );
        entry.quarantinedTo = to;
      }
      for (const { path, objectId } of await readKeyObjects(core)) {
        if (bad.has(objectId)) await core.fs.rm(path, { force: true });
      }
    });
  }
  return report;
}

async function checkObject(core: StoreCore, objectId: string): Promise<string | undefined> {
  let marker: ObjectMarker | undefined;
  try {
    marker = await core.readMarker(objectId);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (!marker) return 'the completion marker is missing';
  try {
    const now = await sealTree(core.fs, core.layout.content(objectId), { normalize: false });
    if (now.digest !== marker.digest) return `content digest ${now.digest} differs from the marker's ${marker.digest}`;
    if (now.files !== marker.files || now.bytes !== marker.bytes) return 'file count or size differs from the marker';
  } catch (error) {
    if (error instanceof ContentCacheError || error instanceof NotInsideError) return error.message;
    throw error;
  }
  return undefined;
}

/** See ContentStore.gc. */
export async function collectGarbage(core: StoreCore): Promise<GcReport> {
  const report: GcReport = {
    removedObjects: [],
    removedKeys: 0,
    removedLinks: 0,
    removedStaging: 0,
    removedPrivate: 0,
    freedBytes: 0,
  };
  await core.withPublishLock(async () => {
    const objects = new Set(await core.readFolder(core.layout.objects));
    const reached = new Set<string>();
    for (const { path, objectId } of await readKeyObjects(core)) {
      if (objects.has(objectId)) reached.add(objectId);
      else if (await removeFile(core, path)) report.removedKeys += 1;
    }
    for (const name of await core.readFolder(core.layout.links)) {
      const path = join(core.layout.links, name);
      if (name.startsWith(TEMP_PREFIX)) {
        await removeIfOld(core, path);
        continue;
      }
      const objectId = core.layout.objectIdOfLinkTarget(await core.fs.readlink(path).catch(() => ''));
      if (objectId && objects.has(objectId)) reached.add(objectId);
      else if (await removeFile(core, path)) report.removedLinks += 1;
    }
    for (const objectId of objects) {
      if (reached.has(objectId)) continue;
      const marker = await core.readMarker(objectId).catch(() => undefined);
      if (await core.moveToTrash(core.layout.object(objectId))) {
        report.removedObjects.push(objectId);
        report.freedBytes += marker?.bytes ?? 0;
      }
    }
    for (const name of await core.readFolder(core.layout.keys)) {
      if (name.startsWith(TEMP_PREFIX)) await removeIfOld(core, join(core.layout.keys, name));
    }
    report.removedStaging = await core.sweepDeadWriters(true);
  });
  // Also what processes that died before emptying it left in the trash.
  await core.emptyTrash();
  // Credentials of preparations that were killed: never those of a live one (the owner
  // record names a running process), whatever the publication lock says.
  report.removedPrivate = await sweepPrivateDirs(core.layout.private);
  return report;
}

/** Key record files with the object each names; temporary and unreadable ones are skipped. */
async function readKeyObjects(core: StoreCore): Promise<{ path: string; objectId: string }[]> {
  const found: { path: string; objectId: string }[] = [];
  for (const name of await core.readFolder(core.layout.keys)) {
    if (name.startsWith(TEMP_PREFIX)) continue;
    const path = join(core.layout.keys, name);
    try {
      const record = JSON.parse(await core.fs.readFile(path, 'utf8')) as { objectId?: unknown };
      found.push({ path, objectId: typeof record.objectId === 'string' ? record.objectId : '' });
    } catch {
      found.push({ path, objectId: '' });
    }
  }
  return found;
}

/**
 * Removes a key record or a link; false when it was gone already (another process's gc got
 * there between the listing and now), so a report counts only what this call removed.
 */
async function removeFile(core: StoreCore, path: string): Promise<boolean> {
  return io('remove', path, () =>
    core.fs.rm(path).then(
      () => true,
      (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      },
    ),
  );
}

async function removeIfOld(core: StoreCore, path: string): Promise<void> {
  const stat = await core.fs.lstat(path).catch(() => undefined);
  if (stat && Date.now() - stat.mtimeMs > TEMP_FILE_GRACE_MS)
    await core.fs.rm(path, { force: true }).catch(() => undefined);
}
