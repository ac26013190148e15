// Deterministic AIP-26 bundle archives, and safe reading of archives from outside.
export { writeBundle, bundleStream, DEFAULT_GZIP_LEVEL } from './write-bundle.js';
export type { WriteBundleOptions, BundleEntries } from './write-bundle.js';
export { bundlePathProblem } from './bundle-plan.js';
export type { BundleEntry, InMemoryEntry } from './bundle-plan.js';
export { extractTarGz } from './extract.js';
export type { ExtractOptions, ExtractResult } from './extract.js';
export { readTarGz, readBundleEntries } from './read-tar-gz.js';
export { readArchive } from './read-archive.js';
export type { ArchiveSource, ArchiveLimits, ReadArchiveOptions, ArchiveFile, ArchiveVisitor } from './read-archive.js';
export { selectFolder } from './select-folder.js';
export { ArchiveError, BundleEntryError, ExtractIOError } from './errors.js';
export type { ArchiveProblem, BundleEntryProblem } from './errors.js';
