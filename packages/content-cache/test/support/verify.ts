import type { ContentStore } from '@agentproto/content-cache';

/**
 * For tests about the remote tier's transport, extraction and marker checks: every
 * acquisition of `store` gets a `verify` that accepts the tree, standing for a caller that
 * proves identity some other way. Without a `verify` the store does not use its remote at
 * all; what a real proof refuses is tested in test/security/.
 */
export function provingEveryTree(store: ContentStore): ContentStore {
  const acquire = store.acquire.bind(store);
  store.acquire = (key, fill, options = {}) => acquire(key, fill, { verify: async () => undefined, ...options });
  return store;
}
