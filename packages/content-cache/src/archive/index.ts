export { readArchive, checkReadOptions } from './read-archive.js';
export type { ArchiveSource, ArchiveLimits, ReadArchiveOptions, ArchiveFile, ArchiveVisitor } from './read-archive.js';
export { safeEntrySegments } from './entry-name.js';
export { linkStaysInside } from './link-target.js';
export { ArchiveError } from './errors.js';
export type { ArchiveProblem } from './errors.js';
