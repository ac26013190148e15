export { EXTENSION_FINDING_CODES } from './codes.js';
export { extensionData } from './data.js';
export { extensionFiles, namespaceFolderProblem } from './files.js';
export {
  KNOWN_NAMESPACES,
  knownNamespace,
  matchLayout,
} from './namespaces.js';
export { packagePathProblem } from './paths.js';
export {
  type UnmappedReason,
  splitExtensions,
} from './split.js';
