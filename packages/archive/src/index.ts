// The one safe tar(.gz) reader every package uses, and the rules archive entries obey.

// Read an archive: every entry checked (names, links, pax, sizes, bombs, end of archive)
export { readArchive, checkReadOptions } from './read-archive.js';
export type { ArchiveSource, ArchiveLimits, ReadArchiveOptions, ArchiveFile, ArchiveVisitor } from './read-archive.js';

// Streaming pieces the reader is built from, for a caller that reads a stream itself
export { GunzipOneMember } from './gunzip-one-member.js';
export { TarEndMarker } from './tar-end.js';

// Entry rules: safe names, links that stay inside, git metadata, the one archive order
export { safeEntrySegments } from './entry-name.js';
export { linkStaysInside } from './link-target.js';
export { gitPathProblem, isDotGit, isDotGitmodules } from './git-name.js';
export type { GitPathProblem } from './git-name.js';
export { sortInArchiveOrder } from './entry-order.js';

// Errors
export { ArchiveError } from './errors.js';
export type { ArchiveProblem } from './errors.js';
