export { SIDECAR, type PackageFile, contentHash, includeGlobProblem, selectIncluded } from './include.js';
export { rewriteSharedLinks, shareResources } from './shared.js';
