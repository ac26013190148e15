// An OCI distribution client: names, blobs, manifests, tags, auth, and file trees as layers.

// The client: blobs, manifests and tags on one registry, Basic and bearer-token auth
export {
  OciClient,
  sha256Digest,
  parseChallenge,
  OCI_MANIFEST,
  EMPTY_JSON,
  EMPTY_JSON_MEDIA_TYPE,
} from './oci-client.js';
export type {
  OciClientOptions,
  RegistryAuth,
  RegistryCredentials,
  AuthChallenge,
  Challenge,
  Descriptor,
  ImageManifest,
  FetchedManifest,
} from './oci-client.js';

// Names: references, repositories, tags and digests checked before any request
export { parseReference, checkRepository, checkReference, isDigest, isTag } from './names.js';
export type { ArtifactReference } from './names.js';

// File trees as deterministic layers, and layers back into trees
export { packTree, readLayerBlob, unpackLayer, LAYER_TAR, LAYER_TAR_GZIP } from './layer.js';
export type { LayerOptions, UnpackTarget } from './layer.js';

// Errors
export { RegistryError } from './errors.js';
export type { RegistryErrorCode } from './errors.js';
