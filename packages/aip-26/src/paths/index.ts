export { PathError, PathCollisionError } from './errors.js';
export type { PathRefusal } from './errors.js';
export { PATH_LIMITS } from './limits.js';
export { normalizePath, normalizeWorkspacePath, normalizeBundlePath, normalizeRemotePath } from './normalize.js';
export { FIELD_RULES, normalizeManifestPath } from './fields.js';
export type { ManifestPathField } from './fields.js';
export { pathKey, findPathTwins, findFileDirectoryConflicts, assertNoPathCollisions } from './twins.js';
export { isInside } from './inside.js';
