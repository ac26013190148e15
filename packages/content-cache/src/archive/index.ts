export { readArchive, checkReadOptions } from './read-archive.js';
export type { ArchiveSource, ArchiveLimits, ReadArchiveOptions, ArchiveFile, ArchiveVisitor } from './read-archive.js';
export { safeEntrySegments } from './entry-name.js';
export { linkStaysInside } from './link-target.js';
export { gitPathProblem, isDotGit, isDotGitmodules } from './git-name.js';
export type { GitPathProblem } from './git-name.js';
export { ArchiveError } from './errors.js';
export type { ArchiveProblem } from './errors.js';
