export { BUNDLE_FINDING_CODES, type BundleFindingCode } from './codes.js';
export { SIDECAR, type PackageFile, byteOrder, contentHash, includeGlobProblem, selectIncluded } from './include.js';
export { rewriteSharedLinks, shareResources } from './shared.js';
