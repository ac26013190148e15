import type { CacheKey } from '../canonical-key.js';
import type { ObjectMarker } from '../store/marker.js';
import type { WriteFileOptions } from '../writer.js';

/** What a remote's pull writes through: the store's own writer, hashing as it writes. */
export interface RemoteFillContext {
  signal: AbortSignal;
  writeFile(path: string, data: Uint8Array, options?: WriteFileOptions): Promise<void>;
}

export interface RemoteObject {
  /**
   * The marker the remote claims. The store publishes only a tree whose digest matches it,
   * and only once the acquisition's `verify` proved it: a marker is the writer's word.
   */
  marker: ObjectMarker;
}

/**
 * A shared tier behind the local store: consulted on a local miss before the origin, and
 * given every object filled from the origin. `ociRemote` is the one this package ships; a
 * host may bring another (any content-addressed blob service).
 */
export interface StoreRemote {
  /** Names the remote in events and messages; holds no credential. */
  readonly label: string;
  /** Writes the object's tree into `destination` (absent until then), or returns undefined when the remote has none. */
  pull(objectId: string, destination: string, context: RemoteFillContext): Promise<RemoteObject | undefined>;
  push(object: { key: CacheKey; marker: ObjectMarker; path: string }, signal?: AbortSignal): Promise<void>;
  recall(name: string, signal?: AbortSignal): Promise<string | undefined>;
  remember(name: string, value: string, signal?: AbortSignal): Promise<void>;
}

/** What the store reports about its remote tier. Warnings never fail an acquisition. */
export type StoreEvent =
  | { type: 'remote-hit'; objectId: string; remote: string; files: number; bytes: number }
  | { type: 'remote-miss'; objectId: string; remote: string }
  | { type: 'remote-pushed'; objectId: string; remote: string }
  | {
      type: 'remote-warning';
      remote: string;
      operation: 'pull' | 'push' | 'recall' | 'remember';
      /** The object or fact name concerned. */
      subject: string;
      /** The error's stable code (REGISTRY_DIGEST_MISMATCH, CACHE_UNSAFE_TREE, ...). */
      code: string;
      message: string;
    };
