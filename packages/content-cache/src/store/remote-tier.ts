import type { CacheKey } from '../canonical-key.js';
import { AcquisitionAbortedError, FillFailedError, RemoteUnprovenError } from '../errors.js';
import type { RemoteObject, StoreEvent, StoreRemote } from '../remote/store-remote.js';
import type { AcquireOptions } from './acquire.js';
import type { StoreCore } from './core.js';
import { type Fill, type StoredTree, fillAndPublish, withCheck } from './publish.js';

/** Thrown inside a remote fill when the remote has no such object: a miss, not a warning. */
const NOT_IN_REMOTE = Symbol('not in remote');

/**
 * The shared tier behind a store: pulls on a local miss, pushes what was filled, and tells
 * the host what it did through events. Its failures are events, never errors.
 */
export class RemoteTier {
  /** Pushes and fact writes to the remote still in flight (see remoteIdle). */
  private readonly tasks = new Set<Promise<void>>();

  constructor(
    private readonly core: StoreCore,
    readonly remote: StoreRemote,
    private readonly onEvent: ((event: StoreEvent) => void) | undefined,
  ) {}

  /**
   * Tries the remote tier for an object missing here. What it sends goes through the same
   * path as a fill (staging, the check, sealing, one rename), and is published only when
   * the tree's digest, file count and bytes equal the marker the remote claims, and then
   * only once `verify` proved the sealed tree to be the content the key names. The marker
   * check catches damage; only the proof catches a writer that lies consistently. Any
   * failure of the remote is a warning event and undefined, so the caller's fill runs
   * instead; only the caller's own cancellation is thrown.
   */
  async pull(
    key: CacheKey,
    keyText: string,
    digest: string,
    objectId: string,
    signal: AbortSignal,
    check: ((destination: string) => Promise<void>) | undefined,
    verify: NonNullable<AcquireOptions['verify']>,
  ): Promise<StoredTree | undefined> {
    const remote = this.remote;
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
      const tree = await fillAndPublish(
        this.core,
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
      else this.warn('pull', objectId, cause);
      return undefined;
    }
  }

  /** After a fill from the origin: the tree goes to the remote in the background. */
  pushInBackground(key: CacheKey, tree: StoredTree): void {
    const remote = this.remote;
    const marker = this.core.markers.get(tree.objectId);
    if (!marker) return;
    this.track(
      remote.push({ key, marker, path: tree.path }).then(
        () => this.emit({ type: 'remote-pushed', objectId: tree.objectId, remote: remote.label }),
        (error: unknown) => this.warn('push', tree.objectId, error),
      ),
    );
  }

  /** Pushes `tree`, which the store holds for `key`, and waits for it; false when there is no such tree. */
  async push(key: CacheKey, tree: StoredTree | undefined, signal: AbortSignal | undefined): Promise<boolean> {
    const marker = tree && (await this.core.presentMarker(tree.objectId));
    if (!tree || !marker) return false;
    await this.remote.push({ key, marker, path: tree.path }, signal);
    this.emit({ type: 'remote-pushed', objectId: tree.objectId, remote: this.remote.label });
    return true;
  }

  /** Resolves once every background push and fact write to the remote has finished (or failed and been reported). */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  track(task: Promise<void>): void {
    const tracked = task.finally(() => this.tasks.delete(tracked));
    this.tasks.add(tracked);
  }

  warn(operation: 'pull' | 'push' | 'recall' | 'remember', subject: string, error: unknown): void {
    const code =
      typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'REMOTE_FAILED';
    const message = error instanceof Error ? error.message : String(error);
    this.emit({ type: 'remote-warning', remote: this.remote.label, operation, subject, code, message });
  }

  private emit(event: StoreEvent): void {
    try {
      this.onEvent?.(event);
    } catch {
      // A listener's failure is not the acquisition's.
    }
  }
}
