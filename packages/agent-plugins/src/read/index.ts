export { READ_FINDING_CODES } from './codes.js';
export {
  FAILURE_BOUNDARIES,
  type FailureScope,
  type ListedPath,
  type PluginReader,
  type PluginReaderOptions,
  type ReadFailure,
  type ReadFileResult,
  failureBoundary,
  openPluginReader,
} from './reader.js';
export {
  MAX_LINK_HOPS,
  type PackageFs,
  type ResolveFailureReason,
  nodePackageFs,
  packagePathSegments,
  resolveInside,
} from './resolve.js';
