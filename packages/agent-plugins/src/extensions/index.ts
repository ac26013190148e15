export { EXTENSION_FINDING_CODES, type ExtensionFindingCode } from './codes.js';
export { extensionData, sortKeysDeep } from './data.js';
export { extensionFiles, namespaceFolderProblem } from './files.js';
export {
  type ExtensionFileLayout,
  type ExtensionKind,
  KNOWN_NAMESPACES,
  type KnownNamespace,
  type LayoutMatch,
  RESERVED_NAMESPACE_FOLDERS,
  knownNamespace,
  matchLayout,
} from './namespaces.js';
export { packagePathProblem } from './paths.js';
export {
  type ExtensionSplit,
  type ImportedExtension,
  type UnmappedExtension,
  type UnmappedReason,
  splitExtensions,
} from './split.js';
