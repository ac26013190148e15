export { READ_FINDING_CODES } from './codes.js';
export {
  FAILURE_BOUNDARIES,
  type FailureScope,
  type ReadFileResult,
  failureBoundary,
} from './reader.js';
export { nodePackageFs, openPluginReader, resolveInside } from './node.js';
export {
  MAX_LINK_HOPS,
  type PackageFs,
  type ResolveFailureReason,
  packagePathSegments,
} from './resolve.js';
