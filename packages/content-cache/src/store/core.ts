import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CorruptObjectError, StoreIOError } from '../errors.js';
import { type StoreLayout, TEMP_PREFIX } from '../layout.js';
import { type HeldLock, type LockOptions, isLockHeld, takeLock } from '../lock.js';
import type { StoreFs } from '../store-fs.js';
import { io } from '../tree.js';
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
  /** Markers of objects seen published, by object id (see presentMarker). */
  readonly markers = new Map<string, ObjectMarker>();
  /** Digests of keys whose record was seen written (see isRecorded in acquire.ts). */
  readonly recorded = new Set<string>();
  private lastSweep = 0;
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

  async readFolder(folder: string): Promise<string[]> {
    return (await io('read store folder', folder, () => this.fs.readdir(folder))).sort();
  }
}
