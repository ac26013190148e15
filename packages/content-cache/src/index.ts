// An immutable, crash-safe store of file trees for a host: open it, acquire a key's tree, keep it tidy.
// Every name here is a promise to hosts; key canonicalisation, sealing and the remote's layout stay inside.

// Open a store and acquire trees by key
export { openContentStore, ContentStore } from './store.js';
export type {
  AcquireOptions,
  ContentStoreOptions,
  Fill,
  FillContext,
  GcReport,
  ObjectMarker,
  StoreEntry,
  StoreListing,
  StoredTree,
  VerifyReport,
} from './store.js';
export type { CacheKey, JsonValue } from './canonical-key.js';
export type { WriteFileOptions } from './writer.js';
export type { LockOptions } from './lock.js';

// Where the store lives and the filesystem it calls
export { defaultCacheRoot } from './default-root.js';
export { nodeStoreFs } from './store-fs.js';
export type { StoreFs } from './store-fs.js';

// The digest of a folder, as the store computes it
export { hashTree } from './tree.js';
export type { HashTreeOptions, TreeSummary } from './tree.js';

// Private folders for credentials, removed when their owner is gone
export { makePrivateDir, removePrivateDir, sweepPrivateDirs } from './private-dirs.js';

// The remote tier on an OCI registry, and the events a store reports
export { ociRemote, OciRemote, objectTag } from './remote/oci-remote.js';
export type { OciRemoteOptions } from './remote/oci-remote.js';
export type { StoreRemote, StoreEvent, RemoteObject, RemoteFillContext } from './remote/store-remote.js';

// Errors a host can catch or receive in an event (each with a stable `code`)
export {
  ContentCacheError,
  InvalidKeyError,
  StoreRootError,
  FillFailedError,
  FillOutsideDestinationError,
  UnsafeTreeError,
  AcquisitionAbortedError,
  StoreIOError,
  LockCompromisedError,
  CorruptObjectError,
  RemoteMismatchError,
  RemoteUnprovenError,
  RemoteFactMismatchError,
} from './errors.js';
export type { ContentCacheErrorCode, RootProblem, UnsafeTreeReason } from './errors.js';
