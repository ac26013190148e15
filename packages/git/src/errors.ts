/**
 * One class per failure. Callers branch on `code` (stable); the facts are fields; the
 * message is for humans and names the offending URL, ref or path. No error ever carries a
 * credential: URLs with userinfo are refused before anything is echoed, header values are
 * never put into a message, and every error leaving the public API is scrubbed of the
 * header values of its request (see redact.ts), causes included.
 */
export type GitErrorCode =
  | 'GIT_INVALID_URL'
  | 'GIT_URL_HAS_CREDENTIALS'
  | 'GIT_UNSUPPORTED_URL'
  | 'GIT_INSECURE_URL'
  | 'GIT_INVALID_ARGUMENT'
  | 'GIT_INVALID_REF_NAME'
  | 'GIT_AMBIGUOUS_REF'
  | 'GIT_AMBIGUOUS_COMMIT'
  | 'GIT_REF_NOT_FOUND'
  | 'GIT_COMMIT_NOT_FOUND'
  | 'GIT_ABBREVIATED_SHA'
  | 'GIT_UPPERCASE_SHA'
  | 'GIT_INVALID_COMMIT_ID'
  | 'GIT_INVALID_PATH'
  | 'GIT_DESTINATION_EXISTS'
  | 'GIT_AUTH_FAILED'
  | 'GIT_HOST_KEY'
  | 'GIT_REPOSITORY_NOT_FOUND'
  | 'GIT_COMMIT_UNAVAILABLE'
  | 'GIT_NOT_A_COMMIT'
  | 'GIT_COMMIT_MISMATCH'
  | 'GIT_CORRUPT_OBJECT'
  | 'GIT_NOT_A_DIRECTORY'
  | 'GIT_UNSAFE_TREE'
  | 'GIT_TRANSPORT'
  | 'GIT_IO'
  | 'GIT_ABORTED'
  | 'GIT_LIMIT_EXCEEDED'
  | 'GIT_PACK_TOO_LARGE';

export abstract class GitError extends Error {
  readonly code: GitErrorCode;

  constructor(code: GitErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
  }

  /** `name`, `code`, `message` and the facts; never the cause, which is for debugging. */
  toJSON(): Record<string, unknown> {
    return { ...(this as object), message: this.message };
  }
}

/** The URL cannot be parsed, has no repository path, or carries a query or fragment. */
export class GitInvalidUrlError extends GitError {
  declare readonly code: 'GIT_INVALID_URL';
  constructor(
    /** The URL with any userinfo, query and fragment masked. */
    readonly url: string,
    readonly reason: string,
  ) {
    super('GIT_INVALID_URL', `invalid git URL ${url}: ${reason}`);
  }
}

/** `https://user:pass@host/…` or `https://token@host/…`: credentials go through `auth`, never the URL. */
export class GitUrlHasCredentialsError extends GitError {
  declare readonly code: 'GIT_URL_HAS_CREDENTIALS';
  constructor(
    /** The URL with the userinfo replaced by `***`. */
    readonly url: string,
  ) {
    super(
      'GIT_URL_HAS_CREDENTIALS',
      `git URL ${url} carries credentials in its userinfo; remove them and pass them through the auth option`,
    );
  }
}

/** The engine does not speak this URL's scheme (e.g. `ssh:` with the isomorphic-git engine). */
export class GitUnsupportedUrlError extends GitError {
  declare readonly code: 'GIT_UNSUPPORTED_URL';
  constructor(
    readonly url: string,
    readonly protocol: string,
    readonly engine: string,
  ) {
    super('GIT_UNSUPPORTED_URL', `the ${engine} engine cannot fetch ${url}: ${protocol} is not supported`);
  }
}

/** Plain `http:` to a host that is not loopback, without `allowInsecureHttp`. */
export class GitInsecureUrlError extends GitError {
  declare readonly code: 'GIT_INSECURE_URL';
  constructor(readonly url: string) {
    super(
      'GIT_INSECURE_URL',
      `refusing plain http to ${url}: use https, or set allowInsecureHttp (http is allowed by default only for loopback hosts)`,
    );
  }
}

/** An argument that is neither a URL, a ref, a commit id nor a path is unusable (e.g. an auth header). */
export class GitInvalidArgumentError extends GitError {
  declare readonly code: 'GIT_INVALID_ARGUMENT';
  constructor(
    readonly argument: string,
    readonly reason: string,
  ) {
    super('GIT_INVALID_ARGUMENT', `invalid ${argument}: ${reason}`);
  }
}

/** The name breaks git-check-ref-format (or one of our stricter rules); nothing was looked up. */
export class GitInvalidRefNameError extends GitError {
  declare readonly code: 'GIT_INVALID_REF_NAME';
  constructor(
    readonly ref: string,
    readonly reason: string,
  ) {
    super('GIT_INVALID_REF_NAME', `invalid ref name ${quote(ref)}: ${reason}`);
  }
}

/** A short name that is both a branch and a tag. */
export class GitAmbiguousRefError extends GitError {
  declare readonly code: 'GIT_AMBIGUOUS_REF';
  constructor(
    readonly ref: string,
    /** The full names that match, to pick one from. */
    readonly candidates: readonly string[],
    readonly url: string,
  ) {
    super('GIT_AMBIGUOUS_REF', `ref ${quote(ref)} is ambiguous at ${url}: use one of ${candidates.join(', ')}`);
  }
}

/** No ref of that name at the remote. */
export class GitRefNotFoundError extends GitError {
  declare readonly code: 'GIT_REF_NOT_FOUND';
  constructor(
    readonly ref: string,
    readonly url: string,
    /** The full names that were looked up. */
    readonly tried: readonly string[],
  ) {
    super('GIT_REF_NOT_FOUND', `ref ${quote(ref)} not found at ${url} (looked for ${tried.join(', ')})`);
  }
}

/** An abbreviated commit id that several commits of the remote's history start with. */
export class GitAmbiguousCommitError extends GitError {
  declare readonly code: 'GIT_AMBIGUOUS_COMMIT';
  constructor(
    readonly prefix: string,
    /** The full ids that start with `prefix`, sorted. */
    readonly candidates: readonly string[],
    readonly url: string,
  ) {
    super(
      'GIT_AMBIGUOUS_COMMIT',
      `commit id ${quote(prefix)} is ambiguous at ${url}: ${candidates.length} commits start with it (${candidates.join(', ')})`,
    );
  }
}

/** No commit reachable from the remote's branches and tags starts with the abbreviation. */
export class GitCommitNotFoundError extends GitError {
  declare readonly code: 'GIT_COMMIT_NOT_FOUND';
  constructor(
    readonly prefix: string,
    readonly url: string,
  ) {
    super('GIT_COMMIT_NOT_FOUND', `no commit reachable from a branch or tag of ${url} starts with ${quote(prefix)}`);
  }
}

/** A short hex string that is not a ref: only a full 40-character commit id can be used. */
export class GitAbbreviatedShaError extends GitError {
  declare readonly code: 'GIT_ABBREVIATED_SHA';
  constructor(readonly ref: string) {
    super(
      'GIT_ABBREVIATED_SHA',
      `${quote(ref)} looks like an abbreviated commit id: a remote only advertises refs, so expanding ` +
        "an abbreviation would need the repository's history (a clone); use the full 40-character commit id",
    );
  }
}

/** A 40-hex commit id with upper-case letters: git prints and advertises ids in lower case. */
export class GitUppercaseShaError extends GitError {
  declare readonly code: 'GIT_UPPERCASE_SHA';
  constructor(readonly ref: string) {
    super('GIT_UPPERCASE_SHA', `commit id ${quote(ref)} has upper-case letters; use ${ref.toLowerCase()}`);
  }
}

/** fetchDirectory was given something that is not a commit id (e.g. a branch name: resolve it first). */
export class GitInvalidCommitIdError extends GitError {
  declare readonly code: 'GIT_INVALID_COMMIT_ID';
  constructor(readonly commit: string) {
    super(
      'GIT_INVALID_COMMIT_ID',
      `${quote(commit)} is not a full commit id (40 lower-case hex digits); resolve a ref with resolveRef first`,
    );
  }
}

/** The directory argument is not a clean relative path inside the repository. */
export class GitInvalidPathError extends GitError {
  declare readonly code: 'GIT_INVALID_PATH';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super('GIT_INVALID_PATH', `invalid repository path ${quote(path)}: ${reason}`);
  }
}

/** fetchDirectory writes only into a folder it creates itself. */
export class GitDestinationExistsError extends GitError {
  declare readonly code: 'GIT_DESTINATION_EXISTS';
  constructor(
    readonly dest: string,
    cause?: unknown,
  ) {
    super('GIT_DESTINATION_EXISTS', `destination ${dest} already exists; fetchDirectory creates it`, cause);
  }
}

/**
 * The server refused the credentials: HTTP 401 or 403 (`status`), or an SSH server that
 * accepted none of the keys offered (`status` undefined).
 */
export class GitAuthFailedError extends GitError {
  declare readonly code: 'GIT_AUTH_FAILED';
  constructor(
    readonly url: string,
    readonly status: number | undefined,
    cause?: unknown,
  ) {
    super(
      'GIT_AUTH_FAILED',
      `authentication failed for ${url} (${status === undefined ? 'the SSH server accepted no key offered' : `HTTP ${status}`})`,
      cause,
    );
  }
}

/**
 * The SSH server's host key is not the one pinned in the known_hosts file (or the file has
 * no key for that host): the connection was refused before any credential was offered.
 */
export class GitHostKeyError extends GitError {
  declare readonly code: 'GIT_HOST_KEY';
  constructor(
    readonly url: string,
    cause?: unknown,
  ) {
    super(
      'GIT_HOST_KEY',
      `host key verification failed for ${url}: the server's key is not the one in the known_hosts file`,
      cause,
    );
  }
}

/** No repository at that address: HTTP 404, or an SSH server saying there is none. */
export class GitRepositoryNotFoundError extends GitError {
  declare readonly code: 'GIT_REPOSITORY_NOT_FOUND';
  constructor(
    readonly url: string,
    cause?: unknown,
  ) {
    super('GIT_REPOSITORY_NOT_FOUND', `no git repository at ${url}`, cause);
  }
}

/** The server did not send the commit: it does not exist, or it is not reachable from any ref. */
export class GitCommitUnavailableError extends GitError {
  declare readonly code: 'GIT_COMMIT_UNAVAILABLE';
  constructor(
    readonly url: string,
    readonly commit: string,
  ) {
    super(
      'GIT_COMMIT_UNAVAILABLE',
      `${url} did not send commit ${commit}: it does not exist there, or the server sends only commits ` +
        'reachable from a branch or tag and this one is not',
    );
  }
}

/** The id names an object that is not a commit (e.g. an annotated tag: use its peeled commit). */
export class GitNotACommitError extends GitError {
  declare readonly code: 'GIT_NOT_A_COMMIT';
  constructor(
    readonly oid: string,
    readonly type: string,
  ) {
    super('GIT_NOT_A_COMMIT', `${oid} is a ${type} object, not a commit`);
  }
}

/** The commit object received does not hash to the id that was asked for. */
export class GitCommitMismatchError extends GitError {
  declare readonly code: 'GIT_COMMIT_MISMATCH';
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super('GIT_COMMIT_MISMATCH', `asked for commit ${expected} but received an object that hashes to ${actual}`);
  }
}

/** A tree or blob is missing, does not hash to its id, or cannot be parsed. */
export class GitCorruptObjectError extends GitError {
  declare readonly code: 'GIT_CORRUPT_OBJECT';
  constructor(
    readonly oid: string,
    readonly reason: string,
  ) {
    super('GIT_CORRUPT_OBJECT', `object ${oid}: ${reason}`);
  }
}

/** The path is missing at that commit, or is a file, a symlink or a submodule. */
export class GitNotADirectoryError extends GitError {
  declare readonly code: 'GIT_NOT_A_DIRECTORY';
  constructor(
    readonly path: string,
    readonly commit: string,
    readonly found: 'missing' | 'file' | 'symlink' | 'submodule',
  ) {
    super(
      'GIT_NOT_A_DIRECTORY',
      `${quote(path)} is not a directory at commit ${commit} (${found === 'missing' ? 'no such path' : `it is a ${found}`})`,
    );
  }
}

/** The tree holds something that must not be written: a link leaving the directory, a `.git` entry, a bad name. */
export class GitUnsafeTreeError extends GitError {
  declare readonly code: 'GIT_UNSAFE_TREE';
  constructor(
    /** The entry, relative to the fetched directory. */
    readonly path: string,
    readonly reason: string,
    /** For a symlink: its target as stored. */
    readonly target?: string,
  ) {
    super(
      'GIT_UNSAFE_TREE',
      `refusing ${quote(path)}: ${reason}${target === undefined ? '' : ` (target ${quote(target)})`}`,
    );
  }
}

/** Network failure, an unexpected HTTP status, or an answer that is not git's protocol. */
export class GitTransportError extends GitError {
  declare readonly code: 'GIT_TRANSPORT';
  constructor(
    readonly url: string,
    readonly reason: string,
    readonly status?: number,
    cause?: unknown,
  ) {
    super('GIT_TRANSPORT', `git transport failed for ${url}: ${reason}`, cause);
  }
}

/** A local file operation failed: making the destination, the private gitdir, or writing a file. */
export class GitIoError extends GitError {
  declare readonly code: 'GIT_IO';
  constructor(
    readonly path: string,
    readonly operation: string,
    cause?: unknown,
  ) {
    const reason = (cause as { code?: unknown } | undefined)?.code;
    super('GIT_IO', `could not ${operation} ${path}${typeof reason === 'string' ? ` (${reason})` : ''}`, cause);
  }
}

/** The caller's AbortSignal fired; the cause is the signal's reason. Nothing is left behind. */
export class GitAbortedError extends GitError {
  declare readonly code: 'GIT_ABORTED';
  constructor(
    readonly operation: string,
    cause?: unknown,
  ) {
    super('GIT_ABORTED', `${operation} aborted`, cause);
  }
}

/**
 * The directory is over one of the fetch's caps (FetchLimits): `files` (entries), `bytes`
 * (of its files; also when the pack the server sent is past what such a directory can take)
 * or `depth`. Raised while fetching, before anything past the cap is written; `dest` is
 * removed as on any failure.
 */
export class GitLimitExceededError extends GitError {
  declare readonly code: 'GIT_LIMIT_EXCEEDED';
  constructor(
    readonly limit: 'files' | 'bytes' | 'depth',
    /** The cap. */
    readonly max: number,
    /** The repository, as normalized. */
    readonly url: string,
    /** The directory, normalized (`''` for the whole tree). */
    readonly path: string,
    /** What was found past the cap, for messages: an entry's path, a size. */
    readonly detail: string,
    cause?: unknown,
  ) {
    super('GIT_LIMIT_EXCEEDED', `${url} ${quote(path || '.')}: over the ${limit} limit of ${max} (${detail})`, cause);
  }
}

/**
 * An engine's own cap: the pack the server sent grew past `max` bytes (the request's
 * `maxPackBytes`), and the transfer was stopped there. fetchDirectory reports it as
 * GitLimitExceededError (`bytes`), naming the directory.
 */
export class GitPackTooLargeError extends GitError {
  declare readonly code: 'GIT_PACK_TOO_LARGE';
  constructor(
    readonly url: string,
    readonly max: number,
    cause?: unknown,
  ) {
    super('GIT_PACK_TOO_LARGE', `${url}: the pack sent is larger than ${max} bytes; the transfer was stopped`, cause);
  }
}

/** Names come from callers and servers: quoted so control characters show, and kept short. */
export function quote(value: string): string {
  const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
  return JSON.stringify(shown);
}
