// Deterministic AIP-26 bundle archives; archives from outside are read by @agentproto/archive.
export { writeBundle, bundleStream, DEFAULT_GZIP_LEVEL } from './write-bundle.js';
export { bundlePathProblem } from './bundle-plan.js';
export type { InMemoryEntry } from './bundle-plan.js';
export { extractTarGz } from './extract.js';
export type { ExtractOptions } from './extract.js';
export { readTarGz, readBundleEntries } from './read-tar-gz.js';
export { selectFolder } from './select-folder.js';
export { BundleEntryError, ExtractIOError } from './errors.js';
