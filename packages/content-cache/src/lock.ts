import { LockCompromisedError, StoreIOError } from './errors.js';

type ProperLockfile = typeof import('proper-lockfile');
let loaded: Promise<ProperLockfile> | undefined;

/**
 * proper-lockfile, loaded at the first lock: importing it (and graceful-fs, retry and
 * signal-exit behind it) took 19-27 ms here, which a process that never fills a store (a
 * CLI bundling without a cache, a host that only reads) need not pay at start-up.
 */
function properLockfile(): Promise<ProperLockfile> {
  loaded ??= import('proper-lockfile').then((module) => (module as { default?: ProperLockfile }).default ?? module);
  return loaded;
}

export interface LockOptions {
  /** A lock whose holder has not refreshed it for this long belongs to a dead writer. Default 10 s. */
  staleMs?: number;
  /**
   * Called when a lock we hold is lost (its folder removed, or refreshed too late). The
   * store stops the acquisition that held it before its commit point either way; this hook
   * is for logging. proper-lockfile's own default would throw from a timer and kill the process.
   */
  onCompromised?: (error: LockCompromisedError) => void;
}

export interface HeldLock {
  /** Throws LockCompromisedError when the lock was lost since it was taken. */
  assertHeld(): void;
  release(): Promise<void>;
}

/**
 * Takes a proper-lockfile lock (an atomic `mkdir` of `lockPath`, refreshed while held).
 * `path` is only the name the lock is about; it need not exist.
 */
export async function takeLock(path: string, lockPath: string, options: LockOptions, wait: boolean): Promise<HeldLock> {
  let compromised: LockCompromisedError | undefined;
  let release: () => Promise<void>;
  try {
    const lockfile = await properLockfile();
    release = await lockfile.lock(path, {
      lockfilePath: lockPath,
      realpath: false,
      stale: options.staleMs ?? 10_000,
      retries: wait ? { retries: 10_000, factor: 1.2, minTimeout: 2, maxTimeout: 100, randomize: true } : 0,
      onCompromised: (cause) => {
        compromised = new LockCompromisedError(lockPath, cause);
        options.onCompromised?.(compromised);
      },
    });
  } catch (error) {
    throw new StoreIOError('take lock', lockPath, error);
  }
  return {
    assertHeld() {
      if (compromised) throw compromised;
    },
    async release() {
      // A compromised lock is no longer ours to remove; proper-lockfile refuses it anyway.
      if (compromised) return;
      try {
        await release();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ERELEASED')
          throw new StoreIOError('release lock', lockPath, error);
      }
    },
  };
}

/**
 * True while a live writer may hold the lock at `lockPath`; false only when it is absent or
 * stale. A lock that cannot be checked counts as held: removing a live writer's files is
 * worse than keeping a dead writer's a little longer.
 */
export async function isLockHeld(path: string, lockPath: string, staleMs: number): Promise<boolean> {
  try {
    const lockfile = await properLockfile();
    return await lockfile.check(path, { lockfilePath: lockPath, realpath: false, stale: staleMs });
  } catch {
    return true;
  }
}
