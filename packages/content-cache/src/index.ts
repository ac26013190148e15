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
export { hashTree } from './tree.js';
export type { TreeSummary } from './tree.js';
export type { WriteFileOptions } from './writer.js';
export { nodeStoreFs } from './store-fs.js';
export type { StoreFs } from './store-fs.js';
export type { LockOptions } from './lock.js';
export * from './errors.js';
