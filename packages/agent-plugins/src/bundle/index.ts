export { SIDECAR, type PackageFile, includeGlobProblem, selectIncluded } from './include.js';
export { contentHash } from './hash.js';
export { rewriteSharedLinks, shareResources } from './shared.js';
