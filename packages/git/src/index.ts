// @agentproto/git: list a remote's refs, resolve a ref to a commit, learn a directory's tree id, fetch one directory of one commit.

// Resolve a ref and fetch one directory of one commit
export { listRefs } from './list-refs.js';
export { resolveRef } from './resolve-ref.js';
export { expandCommit } from './expand-commit.js';
export { directoryTree, fetchDirectory } from './fetch-directory.js';

// Prove a tree from elsewhere: the directory's tree id at the origin, git's hashing of a folder on disk
export { directoryTreeId } from './directory-tree-id.js';
export { folderTreeId } from './folder-tree-id.js';

// Check a declaration before anything is fetched (pure)
export { normalizeRemoteUrl, remoteHelperOf } from './url.js';
export { refNameProblem } from './ref-name.js';
export { isFullCommitId } from './commit-id.js';
export { normalizeDirectoryPath } from './repo-path.js';

// Engines, and where the system-git engine runs its commands
export { isomorphicGitEngine } from './isomorphic-git/engine.js';
export { systemGitEngine } from './system-git/engine.js';
export { localCommandHost } from './system-git/host.js';

// Errors: every failure is a GitError with a stable code; a failed git command's output is its cause
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
export { GitCommandError } from './system-git/failure.js';

// Types a host passes or receives
export type { RemoteOptions } from './remote.js';
export type { GitAuth } from './credentials.js';
export type { RemoteRef, RemoteRefs } from './remote-refs.js';
export type { RefKind, ResolvedRef } from './resolve-ref.js';
export type { ExpandCommitOptions } from './expand-commit.js';
export type { DirectoryTree, FetchDirectoryOptions, FetchedDirectory } from './fetch-directory.js';
export type { FetchLimits } from './limits.js';
export type { RemoteUrlOptions } from './url.js';

// Types of an engine: what it implements, what it is given, how the built-in ones are configured
export type {
  GitEngine,
  GitFetchRequest,
  GitObjectReader,
  GitObjectType,
  GitRawObject,
  GitRemoteRequest,
  PreloadOptions,
} from './engine.js';
export type { IsomorphicGitEngineOptions } from './isomorphic-git/engine.js';
export type { SystemGitEngineOptions } from './system-git/engine.js';
export type { SshFiles } from './system-git/isolation.js';
export type { CommandHost, CommandResult, CommandRunOptions } from './system-git/host.js';
