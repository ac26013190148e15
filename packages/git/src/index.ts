// @agentproto/git: list a remote's refs, resolve a ref to a commit, learn a directory's tree id, fetch one directory of one commit.
export { listRefs } from './list-refs.js';
export type { ListRefsOptions } from './list-refs.js';
export type { RemoteRef, RemoteRefs } from './remote-refs.js';
export { resolveRef } from './resolve-ref.js';
export type { RefKind, ResolvedRef } from './resolve-ref.js';
export { directoryTree, fetchDirectory } from './fetch-directory.js';
export type { DirectoryTree, FetchDirectoryOptions, FetchedDirectory } from './fetch-directory.js';
export { DEFAULT_FETCH_LIMITS } from './limits.js';
export type { FetchLimits } from './limits.js';
export { expandCommit } from './expand-commit.js';
export type { ExpandCommitOptions } from './expand-commit.js';
export { directoryTreeId } from './directory-tree-id.js';
// Git's hashing from content alone: proves a tree from elsewhere is the one a repository names.
export { gitBlobId, gitTreeId, gitTreeIdOf } from './tree-id.js';
export type { GitTreeEntry, GitTreeMode, GitTreeNode } from './tree-id.js';
export { folderTreeId } from './folder-tree-id.js';
export type { RemoteOptions } from './remote.js';
export type { GitAuth } from './credentials.js';

// Pure checks, for validating a declaration before anything is fetched.
export { normalizeRemoteUrl, maskUrl, remoteHelperOf } from './url.js';
export type { RemoteUrlOptions } from './url.js';
export { assertRefName, refNameProblem } from './ref-name.js';
export { isFullCommitId } from './commit-id.js';
export { normalizeDirectoryPath } from './repo-path.js';

// Engines.
export { isomorphicGitEngine } from './isomorphic-git/engine.js';
export type { IsomorphicGitEngineOptions } from './isomorphic-git/engine.js';
export { systemGitEngine } from './system-git/engine.js';
export type { SystemGitEngineOptions } from './system-git/engine.js';
export { localCommandHost } from './system-git/host.js';
export type { CommandHost, CommandResult, CommandRunOptions } from './system-git/host.js';
export type { SshFiles } from './system-git/isolation.js';
export { GitCommandError } from './system-git/failure.js';
export type {
  GitEngine,
  GitFetchRequest,
  GitObjectReader,
  GitObjectType,
  GitRawObject,
  GitRemoteRequest,
} from './engine.js';

export {
  GitError,
  GitAbbreviatedShaError,
  GitAbortedError,
  GitAmbiguousCommitError,
  GitAmbiguousRefError,
  GitAuthFailedError,
  GitCommitMismatchError,
  GitCommitNotFoundError,
  GitCommitUnavailableError,
  GitCorruptObjectError,
  GitDestinationExistsError,
  GitHostKeyError,
  GitInsecureUrlError,
  GitInvalidArgumentError,
  GitInvalidCommitIdError,
  GitInvalidPathError,
  GitInvalidRefNameError,
  GitInvalidUrlError,
  GitIoError,
  GitLimitExceededError,
  GitNotACommitError,
  GitNotADirectoryError,
  GitPackTooLargeError,
  GitRefNotFoundError,
  GitRepositoryNotFoundError,
  GitTransportError,
  GitUnsafeTreeError,
  GitUnsupportedUrlError,
  GitUppercaseShaError,
  GitUrlHasCredentialsError,
} from './errors.js';
export type { GitErrorCode } from './errors.js';
