import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { NotInsideError } from '@agentproto/fs-inside';
import { type CacheKey, keyDigest } from '../canonical-key.js';
import { ContentCacheError } from '../errors.js';
import { TEMP_PREFIX } from '../layout.js';
import { sweepPrivateDirs } from '../private-dirs.js';
import { io, sealTree } from '../tree.js';
import { REMOVALS_AT_ONCE, type StoreCore, forEachConcurrently } from './core.js';
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

/** One record of the store, as `entries` streams it. */
export type StoreEntry =
  | { kind: 'object'; marker: ObjectMarker }
  | { kind: 'key'; key: CacheKey; objectId: string }
  | { kind: 'link'; name: string; objectId: string | undefined };

/**
 * Records read per turn of the event loop at most: the reads are synchronous (one system
 * call each instead of four thread-pool round trips), in slices, so timers (the lock's
 * refresh) and other work still run.
 */
const SLICE = 512;

/** See ContentStore.entries: objects, then keys, then links, each folder streamed. */
export async function* storeEntries(core: StoreCore): AsyncGenerator<StoreEntry> {
  for await (const [, entry] of namedEntries(core)) yield entry;
}

/** Each entry with the name of its file. */
async function* namedEntries(core: StoreCore): AsyncGenerator<[string, StoreEntry]> {
  for await (const id of sliced(core.names(core.layout.objects))) {
    const marker = readOrSkip(() => core.readMarkerSync(id));
    if (marker) yield [id, { kind: 'object', marker }];
  }
  for await (const name of sliced(core.names(core.layout.keys))) {
    if (name.startsWith(TEMP_PREFIX)) continue;
    const record = readKeyRecord(core, name);
    // Listed only when whole: a key of the right shape that files under this very name
    // (keyDigest refuses any other shape), naming an object id. A caller prints and
    // compares these fields, so a record cut short or edited by hand must not reach it.
    if (!record || !OBJECT_ID.test(record.objectId)) continue;
    if (readOrSkip(() => `${keyDigest(record.key as CacheKey)}.json`) !== name) continue;
    yield [name, { kind: 'key', key: record.key as CacheKey, objectId: record.objectId }];
  }
  for await (const name of sliced(core.names(core.layout.links))) {
    if (name.startsWith(TEMP_PREFIX)) continue;
    const target = readOrSkip(() => core.fs.readlinkSync(join(core.layout.links, name), 'utf8')) ?? '';
    yield [name, { kind: 'link', name, objectId: core.layout.objectIdOfLinkTarget(target) }];
  }
}

/** See ContentStore.list: what `entries` streams, in arrays sorted by file name. */
export async function listStore(core: StoreCore): Promise<StoreListing> {
  const found: Record<StoreEntry['kind'], [string, StoreEntry][]> = { object: [], key: [], link: [] };
  for await (const named of namedEntries(core)) found[named[1].kind].push(named);
  const sorted = <T>(list: [string, StoreEntry][], pick: (entry: StoreEntry) => T): T[] =>
    inNameOrder(list).map((entry) => pick(entry));
  return {
    objects: sorted(found.object, (entry) => (entry as { marker: ObjectMarker }).marker),
    keys: sorted(found.key, (entry) => {
      const { key, objectId } = entry as { key: CacheKey; objectId: string };
      return { key, objectId };
    }),
    links: sorted(found.link, (entry) => {
      const { name, objectId } = entry as { name: string; objectId: string | undefined };
      return { name, objectId };
    }),
  };
}

/** The 12 hex digits every name the store gives a record starts with (a digest). */
const HEX_PREFIX = /^[0-9a-f]{12}/;

/**
 * The entries in the order of their names. A name that starts with 12 hex digits (all the
 * names the store writes) is compared by those digits as a number first, held in one typed
 * array: comparing the strings alone reads names scattered over a heap of a million records,
 * and sorted 1,000,000 in ~2.5 s where this takes ~0.9 s. Names whose numbers are equal, and
 * other names (left there by hand), compare as strings, so the order is that of the names.
 */
function inNameOrder<T>(named: [string, T][]): T[] {
  const count = named.length;
  const prefix = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const name = named[i]![0];
    prefix[i] = HEX_PREFIX.test(name) ? Number.parseInt(name.slice(0, 12), 16) : Number.NaN;
  }
  const byName = (a: number, b: number) => {
    const x = named[a]![0];
    const y = named[b]![0];
    return x < y ? -1 : x > y ? 1 : 0;
  };
  // NaN (a name of another shape) and 0 (equal digits) fall through to the strings.
  const order = new Uint32Array(count).map((_, i) => i).sort((a, b) => prefix[a]! - prefix[b]! || byName(a, b));
  return Array.from(order, (i) => named[i]![1]);
}

/** Each item with the event loop given a turn every SLICE items. */
async function* sliced<T>(items: AsyncIterable<T>): AsyncGenerator<T> {
  let count = 0;
  for await (const item of items) {
    if (++count % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    yield item;
  }
}

/** A record that vanished or was damaged by hand is not listed; gc removes it. */
function readOrSkip<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** A key record's fields, or undefined when it vanished or is not a JSON object; objectId '' when it names none. */
function readKeyRecord(core: StoreCore, name: string): { objectId: string; key: unknown } | undefined {
  let record: unknown;
  try {
    record = core.readRecordSync(join(core.layout.keys, name));
  } catch {
    return undefined;
  }
  if (typeof record !== 'object' || record === null) return undefined;
  const { objectId, key } = record as { objectId?: unknown; key?: unknown };
  return { objectId: typeof objectId === 'string' ? objectId : '', key };
}

/** See ContentStore.verify. */
export async function verifyStore(core: StoreCore, options: { quarantine?: boolean }): Promise<VerifyReport> {
  const report: VerifyReport = { checked: 0, ok: [], corrupt: [] };
  for await (const objectId of core.names(core.layout.objects)) {
    report.checked += 1;
    const problem = await checkObject(core, objectId);
    if (problem === undefined) report.ok.push(objectId);
    else report.corrupt.push({ objectId, reason: problem });
  }
  report.ok.sort();
  report.corrupt.sort((a, b) => (a.objectId < b.objectId ? -1 : 1));
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
      for await (const name of sliced(core.names(core.layout.keys))) {
        if (name.startsWith(TEMP_PREFIX)) continue;
        const record = readKeyRecord(core, name);
        if (record && bad.has(record.objectId)) await core.fs.rm(join(core.layout.keys, name), { force: true });
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
    // Memory: the object ids, 32 bytes each in one sorted buffer (a tenth of the keys, or
    // fewer), never the keys or links, which are streamed from their folders and judged one
    // at a time. Publication takes the same lock, so no object appears meanwhile.
    const objects = new ObjectIdSet();
    for await (const id of sliced(core.names(core.layout.objects))) objects.add(id);
    objects.seal();
    const records = [
      [core.layout.keys, keyReaches, 'removedKeys'],
      [core.layout.links, linkReaches, 'removedLinks'],
    ] as const;
    // Removals go on while the scan does: one at a time, each waited for before the next
    // record was read, they were most of what gc added to the reads (1,000,000 keys with 1%
    // of them garbage: ~6 s of the calling thread idle out of ~40 s).
    for (const [folder, reaches, counted] of records) {
      await forEachConcurrently(unreachingRecords(core, folder, objects, reaches), REMOVALS_AT_ONCE, async (found) => {
        if (found.temporary) await removeIfOld(core, found.path);
        else if (await removeFile(core, found.path)) report[counted] += 1;
      });
    }
    await forEachConcurrently(unreachedObjects(objects), REMOVALS_AT_ONCE, async (objectId) => {
      const marker = readOrSkip(() => core.readMarkerSync(objectId));
      if (await core.moveToTrash(core.layout.object(objectId))) {
        report.removedObjects.push(objectId);
        report.freedBytes += marker?.bytes ?? 0;
      }
    });
    // In the order of their ids, whichever removal finished first.
    report.removedObjects.sort();
    report.removedStaging = await core.sweepDeadWriters(true);
  });
  // Also what processes that died before emptying it left in the trash.
  await core.emptyTrash();
  // Credentials of preparations that were killed: never those of a live one (the owner
  // record names a running process), whatever the publication lock says.
  report.removedPrivate = await sweepPrivateDirs(core.layout.private);
  return report;
}

/** A record a gc removes: one that reaches no object, or a temporary file (removed once old). */
interface Unreaching {
  path: string;
  temporary: boolean;
}

/** The object id a key record names (read synchronously); '' when it is unreadable or names none. */
function keyReaches(core: StoreCore, name: string): string {
  return readKeyRecord(core, name)?.objectId ?? '';
}

/** The object id a declaration link leads to; '' when it is unreadable or leads elsewhere. */
function linkReaches(core: StoreCore, name: string): string {
  const target = readOrSkip(() => core.fs.readlinkSync(join(core.layout.links, name), 'utf8')) ?? '';
  return core.layout.objectIdOfLinkTarget(target) ?? '';
}

/**
 * The records of `folder` (key records or links) that reach no object of `objects`, which
 * marks those they do reach, and temporary files: streamed as the folder is read, so the
 * removals of the first run while the rest is read.
 */
async function* unreachingRecords(
  core: StoreCore,
  folder: string,
  objects: ObjectIdSet,
  reaches: (core: StoreCore, name: string) => string,
): AsyncGenerator<Unreaching> {
  for await (const name of sliced(core.names(folder))) {
    const path = join(folder, name);
    if (name.startsWith(TEMP_PREFIX)) yield { path, temporary: true };
    else {
      const objectId = reaches(core, name);
      if (!(objectId && objects.reach(objectId))) yield { path, temporary: false };
    }
  }
}

/** The objects nothing reached, as the async iterable forEachConcurrently takes. */
async function* unreachedObjects(objects: ObjectIdSet): AsyncGenerator<string> {
  yield* objects.unreached();
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

/**
 * The names in the objects folder, and which of them a key or link reached: object ids as
 * 32 bytes each in one sorted buffer, found by binary search, and one byte per id for
 * "reached". 100,000 objects take 4.5 MiB here, against about 25 MiB as two sets of
 * strings. A name that is not an object id (left there by hand) is kept as a string.
 */
class ObjectIdSet {
  private ids = Buffer.alloc(0);
  private count = 0;
  private readonly others = new Map<string, boolean>();
  private reachedIds = new Uint8Array(0);
  /** The id being looked up, in binary. */
  private readonly probe = Buffer.alloc(32);

  add(name: string): void {
    if (!OBJECT_ID.test(name)) {
      this.others.set(name, false);
      return;
    }
    if ((this.count + 1) * 32 > this.ids.length) {
      const grown = Buffer.allocUnsafe(Math.max(32 * 1024, this.ids.length * 2));
      this.ids.copy(grown, 0, 0, this.count * 32);
      this.ids = grown;
    }
    this.ids.write(name, this.count * 32, 32, 'hex');
    this.count += 1;
  }

  /** Sorts the ids; call once, after the last add. */
  seal(): void {
    const { ids, count } = this;
    // The first six bytes as a number order almost every pair without a call into Buffer.
    const prefix = new Float64Array(count);
    for (let i = 0; i < count; i++) prefix[i] = ids.readUIntBE(i * 32, 6);
    const order = new Uint32Array(count);
    for (let i = 0; i < count; i++) order[i] = i;
    order.sort((a, b) => prefix[a]! - prefix[b]! || ids.compare(ids, b * 32, b * 32 + 32, a * 32, a * 32 + 32));
    const sorted = Buffer.allocUnsafe(count * 32);
    for (let i = 0; i < count; i++) ids.copy(sorted, i * 32, order[i]! * 32, order[i]! * 32 + 32);
    this.ids = sorted;
    this.reachedIds = new Uint8Array(count);
  }

  /** Marks the object a record names as reached; false when the objects folder has no such name. */
  reach(name: string): boolean {
    if (!OBJECT_ID.test(name)) {
      if (!this.others.has(name)) return false;
      this.others.set(name, true);
      return true;
    }
    this.probe.write(name, 0, 32, 'hex');
    let low = 0;
    let high = this.count - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const order = this.probe.compare(this.ids, middle * 32, middle * 32 + 32);
      if (order === 0) {
        this.reachedIds[middle] = 1;
        return true;
      }
      if (order < 0) high = middle - 1;
      else low = middle + 1;
    }
    return false;
  }

  /** The names nothing reached. */
  *unreached(): Generator<string> {
    for (let i = 0; i < this.count; i++) if (!this.reachedIds[i]) yield this.ids.toString('hex', i * 32, i * 32 + 32);
    for (const [name, reached] of this.others) if (!reached) yield name;
  }
}
