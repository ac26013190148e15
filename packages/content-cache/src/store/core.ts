import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CorruptObjectError, StoreIOError } from '../errors.js';
import { type StoreLayout, TEMP_PREFIX } from '../layout.js';
import { type HeldLock, type LockOptions, isLockHeld, takeLock } from '../lock.js';
import type { StoreFs } from '../store-fs.js';
import { io, ioSync } from '../tree.js';
import { type ObjectMarker, isMarkerOf } from './marker.js';

/**
 * What every part of a store shares: where things are, the filesystem, the publication
 * lock, the trash, and what this process already knows about published objects and keys.
 */
export class StoreCore {
  readonly root: string;
  readonly layout: StoreLayout;
  readonly fs: StoreFs;
  readonly lockOptions: LockOptions;
  readonly staleMs: number;
  readonly syncFiles: boolean;
  /** Markers of objects seen published, by object id (see presentMarker); the most recent ones only. */
  readonly markers = new RecentMap<string, ObjectMarker>(REMEMBERED);
  /** Digests of keys whose record was seen written (see isRecorded in acquire.ts); the most recent ones only. */
  readonly recorded = new RecentSet<string>(REMEMBERED);
  private lastSweep = 0;
  /** What readRecordSync reads into: one per store, as every read is synchronous. */
  private readonly recordBuffer = Buffer.allocUnsafe(RECORD_BUFFER);
  /** Something was moved to the trash since it was last emptied. */
  private trashed = false;

  constructor(layout: StoreLayout, fs: StoreFs, options: { lock?: LockOptions; syncFiles?: boolean }) {
    this.layout = layout;
    this.root = layout.root;
    this.fs = fs;
    this.lockOptions = options.lock ?? {};
    this.staleMs = this.lockOptions.staleMs ?? 10_000;
    this.syncFiles = options.syncFiles ?? false;
  }

  /**
   * The marker of a published object, or undefined. Objects are immutable, so a marker read
   * once is remembered; later calls only check that the object was not collected since.
   */
  async presentMarker(objectId: string): Promise<ObjectMarker | undefined> {
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

  /**
   * presentMarker with synchronous calls, for a hit: a marker, a key record and a link are
   * three small reads (an lstat once the marker is known), and each one through libuv's
   * thread pool cost a round trip and a turn of the event loop, more than the read itself.
   */
  presentMarkerSync(objectId: string): ObjectMarker | undefined {
    const known = this.markers.get(objectId);
    if (known) {
      try {
        this.fs.lstatSync(this.layout.marker(objectId));
        return known;
      } catch {
        this.markers.delete(objectId);
      }
    }
    const marker = this.readMarkerSync(objectId);
    if (marker) this.markers.set(objectId, marker);
    return marker;
  }

  /** Write to a temporary name, then rename: readers see the old file or the whole new one. */
  async writeAtomically(folder: string, path: string, text: string, what = 'key record'): Promise<void> {
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

  async syncPath(path: string): Promise<void> {
    await io('sync', path, async () => {
      const handle = await this.fs.open(path, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  }

  async readMarker(objectId: string): Promise<ObjectMarker | undefined> {
    const path = this.layout.marker(objectId);
    let text: string;
    try {
      text = await this.fs.readFile(path, 'utf8');
    } catch (error) {
      return this.missingMarker(path, error);
    }
    return this.parseMarker(objectId, path, text);
  }

  /**
   * readMarker with synchronous calls (readRecordSync): for list and gc, which read a marker
   * per object and would otherwise pay four thread-pool round trips (open, stat, read, close)
   * for each.
   */
  readMarkerSync(objectId: string): ObjectMarker | undefined {
    const path = this.layout.marker(objectId);
    let marker: unknown;
    try {
      marker = this.readRecordSync(path);
    } catch (error) {
      if (error instanceof SyntaxError) throw unreadableMarker(objectId, path, error);
      return this.missingMarker(path, error);
    }
    if (!isMarkerOf(marker, objectId)) throw unreadableMarker(objectId, path, new Error('unexpected fields'));
    return marker;
  }

  /**
   * A small JSON record of the store (a key record, a completion marker), parsed: one open,
   * one read into a buffer kept for the purpose, one close. `readFileSync` reads a second
   * time to see the end of the file: 100,000 key records read that way took 1.8 s of CPU on
   * this project's VM, and 1.4 s with one read each.
   * When the one read fills the buffer, or what it gave does not parse (a damaged record, or
   * a read that stopped short, which a network filesystem may do), the file is read again
   * whole and parsed, so no record is ever judged by a part of it.
   *
   * @throws the filesystem's error (`ENOENT` when there is no such record), or a
   *   `SyntaxError` when the whole file is not JSON.
   */
  readRecordSync(path: string): unknown {
    const fd = this.fs.openSync(path, 'r');
    let length: number;
    try {
      length = this.fs.readSync(fd, this.recordBuffer, 0, RECORD_BUFFER, 0);
    } finally {
      this.fs.closeSync(fd);
    }
    if (length < RECORD_BUFFER) {
      try {
        return JSON.parse(this.recordBuffer.toString('utf8', 0, length));
      } catch {
        // Judged on the whole file below.
      }
    }
    return JSON.parse(this.fs.readFileSync(path, 'utf8'));
  }

  private missingMarker(path: string, error: unknown): undefined {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new StoreIOError('read completion marker', path, error);
  }

  private parseMarker(objectId: string, path: string, text: string): ObjectMarker {
    try {
      const marker = JSON.parse(text) as ObjectMarker;
      if (!isMarkerOf(marker, objectId)) throw new Error('unexpected fields');
      return marker;
    } catch (error) {
      throw unreadableMarker(objectId, path, error);
    }
  }

  async withPublishLock<T>(run: (lock: HeldLock) => Promise<T>): Promise<T> {
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
  async sweepDeadWriters(force: boolean): Promise<number> {
    const now = Date.now();
    if (!force && now - this.lastSweep < this.staleMs) return 0;
    this.lastSweep = now;
    const names = new Set(
      await io('read staging folder', this.layout.staging, () => this.fs.readdir(this.layout.staging)),
    );
    const owners = new Set([...names].map((name) => name.replace(/\.lock$/, '')));
    let removed = 0;
    for (const owner of owners) {
      const dir = join(this.layout.staging, owner);
      if (await isLockHeld(dir, `${dir}.lock`, this.staleMs)) continue;
      await this.moveToTrash(dir);
      await this.fs.rm(`${dir}.lock`, { recursive: true, force: true }).catch(() => undefined);
      removed += names.has(owner) ? 1 : 0;
    }
    return removed;
  }

  /** One rename takes a folder out of sight; deleting its files can then happen at leisure. */
  async moveToTrash(path: string): Promise<boolean> {
    try {
      await this.fs.rename(path, join(this.layout.trash, randomBytes(12).toString('hex')));
      this.trashed = true;
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new StoreIOError('move to trash', path, error);
    }
  }

  async emptyTrash(): Promise<void> {
    this.trashed = false;
    // A few removals at a time, however much a gc moved there: each holds a folder's listing.
    await forEachConcurrently(this.names(this.layout.trash), REMOVALS_AT_ONCE, (name) =>
      this.fs.rm(join(this.layout.trash, name), { recursive: true, force: true }).catch(() => undefined),
    ).catch(() => undefined);
  }

  /**
   * The names in a store folder, streamed from the directory (`opendir`), in the order the
   * filesystem gives them: a folder of a million key records is never held in memory whole.
   * With a `StoreFs` that has no `opendir`, one `readdir`.
   */
  async *names(folder: string): AsyncGenerator<string> {
    const fs = this.fs;
    if (!fs.opendir) {
      yield* await io('read store folder', folder, () => fs.readdir(folder));
      return;
    }
    const dir = await io('read store folder', folder, () => fs.opendir!(folder, { bufferSize: 1024 }));
    // Read synchronously: one call of the kernel's fills the buffer with 1,024 names, and
    // each name then comes without a promise and a turn of the microtask queue of its own.
    const next = () => ioSync('read store folder', folder, () => dir.readSync());
    try {
      for (let entry = next(); entry !== null; entry = next()) yield entry.name;
    } finally {
      await dir.close().catch(() => undefined);
    }
  }
}

/**
 * Removals the store has going at once on libuv's thread pool (emptying the trash, gc), while
 * the calling thread goes on: four, the pool's default size.
 */
export const REMOVALS_AT_ONCE = 4;

/** Bytes readRecordSync reads at once; key records and markers take ~200-300. */
const RECORD_BUFFER = 4096;

function unreadableMarker(objectId: string, path: string, cause: unknown): CorruptObjectError {
  return new CorruptObjectError(objectId, path, 'its completion marker is unreadable', cause);
}

/** How many markers and key digests a store remembers (about 200 bytes each). */
const REMEMBERED = 100_000;

/**
 * A map that remembers about the `limit` most recent entries: two generations, the older
 * dropped whole when the newer fills, so every call stays O(1) and memory bounded.
 */
class RecentMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  constructor(private readonly limit: number) {}
  get(key: K): V | undefined {
    const value = this.current.get(key);
    if (value !== undefined || !this.previous.has(key)) return value;
    const kept = this.previous.get(key) as V;
    this.set(key, kept); // still in use: carried into the newer generation
    return kept;
  }
  has(key: K): boolean {
    return this.current.has(key) || this.previous.has(key);
  }
  set(key: K, value: V): this {
    if (this.current.size >= this.limit / 2) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
    return this;
  }
  delete(key: K): boolean {
    const here = this.current.delete(key);
    return this.previous.delete(key) || here;
  }
}

/** The set of about the `limit` most recent values (see RecentMap). */
class RecentSet<T> {
  private readonly map: RecentMap<T, true>;
  constructor(limit: number) {
    this.map = new RecentMap(limit);
  }
  has(value: T): boolean {
    return this.map.get(value) !== undefined;
  }
  add(value: T): this {
    this.map.set(value, true);
    return this;
  }
}

/**
 * Runs `run` for every item of `items` with at most `limit` runs at once, pulling items only
 * as runs finish (so a streamed listing stays streamed). The first failure stops pulling and
 * is thrown once the runs in progress have settled.
 */
export async function forEachConcurrently<T>(
  items: AsyncIterable<T>,
  limit: number,
  run: (item: T) => Promise<unknown>,
): Promise<void> {
  const iterator = items[Symbol.asyncIterator]();
  let failed = false;
  const worker = async () => {
    try {
      while (!failed) {
        const next = await iterator.next();
        if (next.done) return;
        await run(next.value);
      }
    } catch (error) {
      failed = true;
      throw error;
    }
  };
  let settled: PromiseSettledResult<void>[];
  try {
    // Every run settles before this returns or throws: none is left going after it.
    settled = await Promise.allSettled(Array.from({ length: limit }, worker));
  } finally {
    await iterator.return?.();
  }
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
}
