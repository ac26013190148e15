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
export {
  openInside,
  openDirInside,
  readFileInside,
  readDescriptorInto,
  descriptorIsInside,
  descriptorPath,
  lstatInside,
  realRootOf,
  NotInsideError,
} from './fs/open-inside.js';
export type { InsideHandle, InsideDir, InsideProblem, OpenInsideOptions, ReadInsideOptions } from './fs/open-inside.js';
export { copyInside } from './fs/copy-inside.js';
export type { CopyInsideOptions } from './fs/copy-inside.js';
export type { StoreFs } from './store-fs.js';
export type { LockOptions } from './lock.js';
export * from './errors.js';
export {
  readArchive,
  checkReadOptions,
  safeEntrySegments,
  linkStaysInside,
  ArchiveError,
  gitPathProblem,
  isDotGit,
  GunzipOneMember,
  TarEndMarker,
  sortInArchiveOrder,
} from './archive/index.js';
export type {
  ArchiveSource,
  ArchiveLimits,
  ReadArchiveOptions,
  ArchiveFile,
  ArchiveVisitor,
  ArchiveProblem,
  GitPathProblem,
} from './archive/index.js';
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
export {
  OciClient,
  sha256Digest,
  parseChallenge,
  OCI_MANIFEST,
  EMPTY_JSON,
  EMPTY_JSON_MEDIA_TYPE,
} from './remote/oci-client.js';
export type {
  OciClientOptions,
  RegistryAuth,
  RegistryCredentials,
  AuthChallenge,
  Descriptor,
  ImageManifest,
  FetchedManifest,
} from './remote/oci-client.js';
export { RegistryError } from './remote/errors.js';
export type { RegistryErrorCode } from './remote/errors.js';
export { parseReference, checkRepository, checkReference, isDigest, isTag } from './remote/names.js';
export type { ArtifactReference } from './remote/names.js';
export { packTree, readLayerBlob, unpackLayer, LAYER_TAR, LAYER_TAR_GZIP } from './remote/layer.js';
export type { LayerOptions, UnpackTarget } from './remote/layer.js';
export type { StoreRemote, StoreEvent, RemoteObject, RemoteFillContext } from './remote/store-remote.js';
export {
  DocumentError,
  DocumentSyntaxError,
  DocumentTooComplexError,
  DocumentTooDeepError,
  DocumentTooLargeError,
  DOCUMENT_LIMITS,
  FRONTMATTER_LIMITS,
  parseUntrustedYaml,
  parseYamlDocument,
  yamlDocumentValue,
  parseUntrustedJson,
  parseUntrustedToml,
  findFrontmatter,
  readBoundedFile,
} from './documents/index.js';
export type {
  DocumentErrorCode,
  DocumentFormat,
  DocumentLimits,
  FrontmatterBlock,
  JsonParseOptions,
  TomlParseOptions,
  YamlParseOptions,
} from './documents/index.js';
