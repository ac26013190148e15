import { type CacheKey, canonicalJson, canonicalKey, objectIdOf, sha256Hex } from '../canonical-key.js';
import { AcquisitionAbortedError, StoreIOError } from '../errors.js';
import type { StoreCore } from './core.js';
import {
  type Fill,
  type StoredTree,
  fillAndPublish,
  linkPathOf,
  pointLink,
  record,
  treeOf,
  withCheck,
} from './publish.js';
import type { RemoteTier } from './remote-tier.js';

export interface AcquireOptions {
  /**
   * Gives up waiting (`CACHE_ABORTED`); the fill itself is aborted once every caller waiting
   * on the same key has given up. Default none.
   */
  signal?: AbortSignal;
  /**
   * Checks a staged tree before it is sealed, whether a fill wrote it or the remote did
   * (a skill folder must hold SKILL.md, say). Throwing refuses the tree: from the fill, the
   * acquisition fails with CACHE_FILL_FAILED; from the remote, the fill runs instead.
   * Default none.
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
   * either, since no other machine could prove it. Default none.
   */
  verify?: (tree: string, signal: AbortSignal) => Promise<void>;
}

interface Flight {
  promise: Promise<StoredTree>;
  controller: AbortController;
  waiters: number;
}

/** Finding a key's tree, and filling and publishing it on a miss, once per key in this process. */
export class Acquisitions {
  private readonly flights = new Map<string, Flight>();

  constructor(
    private readonly core: StoreCore,
    private readonly remoteTier: RemoteTier | undefined,
  ) {}

  /** See ContentStore.acquire. */
  acquire(key: CacheKey, fill: Fill, options: AcquireOptions): Promise<StoredTree> {
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

  /** See ContentStore.lookup. */
  async lookup(key: CacheKey): Promise<StoredTree | undefined> {
    const keyText = canonicalKey(key);
    const objectId = objectIdOf(key);
    const marker = this.core.presentMarkerSync(objectId);
    if (!marker || !this.isRecorded(sha256Hex(keyText), keyText) || !this.linkExists(key)) return undefined;
    return treeOf(this.core, key, marker, 'store');
  }

  private linkExists(key: CacheKey): boolean {
    try {
      this.core.fs.lstatSync(linkPathOf(this.core, key));
      return true;
    } catch {
      return false;
    }
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
    const core = this.core;
    // The object id follows from the key, so a hit is proof that the object is still there,
    // the key's record and the declaration link: three small synchronous reads (see
    // presentMarkerSync), about 10 system calls and no round trip through the thread pool.
    const objectId = objectIdOf(key);
    const marker = core.presentMarkerSync(objectId);
    const linked = marker !== undefined && this.linkPointsAt(key, objectId);
    const recorded = marker !== undefined && this.isRecorded(digest, keyText);
    if (marker) {
      if (recorded) {
        if (!linked) await pointLink(core, key, objectId);
        return treeOf(core, key, marker, 'store');
      }
      // Another key with the same content identity already published this tree: no fill
      // needed. Checked again under the lock, since gc may have collected it meanwhile.
      const adopted = await core.withPublishLock(async () => {
        const still = await core.readMarker(objectId);
        return still && record(core, key, keyText, digest, still, 'store');
      });
      if (adopted) return adopted;
      core.markers.delete(objectId);
    }
    // Only what can be proven is taken from the remote tier, or given to it.
    if (this.remoteTier && verify) {
      const pulled = await this.remoteTier.pull(key, keyText, digest, objectId, signal, check, verify);
      if (pulled) return pulled;
    }
    const tree = await fillAndPublish(core, key, keyText, digest, objectId, withCheck(fill, check), signal, 'origin');
    if (this.remoteTier && verify && tree.source === 'origin') this.remoteTier.pushInBackground(key, tree);
    return tree;
  }

  /** Whether a key record for this key exists; remembered, since a record only ever names one object. */
  private isRecorded(digest: string, keyText: string): boolean {
    if (this.core.recorded.has(digest)) return true;
    const path = this.core.layout.key(digest);
    let record: unknown;
    try {
      record = this.core.readRecordSync(path);
    } catch (error) {
      // A record damaged by hand is a miss; the next publication rewrites it.
      if (error instanceof SyntaxError || (error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new StoreIOError('read key record', path, error);
    }
    try {
      if (canonicalJson((record as { key?: unknown } | null)?.key) !== keyText) return false;
    } catch {
      return false;
    }
    this.core.recorded.add(digest);
    return true;
  }

  private linkPointsAt(key: CacheKey, objectId: string): boolean {
    try {
      return this.core.fs.readlinkSync(linkPathOf(this.core, key), 'utf8') === this.core.layout.linkTarget(objectId);
    } catch {
      return false;
    }
  }
}
