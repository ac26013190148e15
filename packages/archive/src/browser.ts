// The rules archive entries obey, for a browser, a worker or an edge function: nothing here
// imports Node. The reader itself (readArchive) streams through node:zlib and is Node's alone.

// Entry rules: safe names, links that stay inside, git metadata
export { safeEntrySegments } from './entry-name.js';
export { linkStaysInside } from './link-target.js';
export { gitPathProblem, isDotGit, isDotGitmodules } from './git-name.js';
export type { GitPathProblem } from './git-name.js';

// Errors
export { ArchiveError } from './errors.js';
export type { ArchiveProblem } from './errors.js';
