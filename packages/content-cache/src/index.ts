export { openContentStore, ContentStore } from './store.js';
export type {
  AcquireOptions,
  ContentStoreOptions,
  Fill,
  FillContext,
  GcReport,
  ObjectMarker,
  StoreListing,
  StoredTree,
  VerifyReport,
} from './store.js';
export { canonicalJson, canonicalKey, objectIdOf } from './canonical-key.js';
export type { CacheKey, JsonValue } from './canonical-key.js';
export { defaultCacheRoot } from './default-root.js';
export { makePrivateDir, removePrivateDir, sweepPrivateDirs } from './private-dirs.js';
export { hashTree } from './tree.js';
export type { HashTreeOptions, TreeSummary } from './tree.js';
export type { WriteFileOptions } from './writer.js';
export { nodeStoreFs } from './store-fs.js';
export type { StoreFs } from './store-fs.js';
export type { LockOptions } from './lock.js';
export * from './errors.js';
export {
  ociRemote,
  OciRemote,
  objectTag,
  keyTag,
  factTag,
  OBJECT_ARTIFACT_TYPE,
  OBJECT_CONFIG_TYPE,
  FACT_ARTIFACT_TYPE,
  FACT_CONFIG_TYPE,
} from './remote/oci-remote.js';
export type { OciRemoteOptions } from './remote/oci-remote.js';
export type { StoreRemote, StoreEvent, RemoteObject, RemoteFillContext } from './remote/store-remote.js';
