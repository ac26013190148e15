/**
 * One class per failure kind. Callers branch on `code`; messages are for humans and name
 * the offending key, path or step. No error ever carries file contents or secrets: a
 * store holds public, immutable content, and keys are public identifiers by contract.
 */
export type ContentCacheErrorCode =
  | 'CACHE_INVALID_KEY'
  | 'CACHE_ROOT_INVALID'
  | 'CACHE_ROOT_IN_WORKSPACE'
  | 'CACHE_ROOT_UNUSABLE'
  | 'CACHE_FILL_FAILED'
  | 'CACHE_FILL_OUTSIDE_DESTINATION'
  | 'CACHE_UNSAFE_TREE'
  | 'CACHE_ABORTED'
  | 'CACHE_IO'
  | 'CACHE_LOCK_COMPROMISED'
  | 'CACHE_CORRUPT_OBJECT'
  | 'CACHE_REMOTE_MISMATCH'
  | 'CACHE_REMOTE_UNPROVEN'
  | 'CACHE_REMOTE_FACT_MISMATCH';

export class ContentCacheError extends Error {
  readonly code: ContentCacheErrorCode;
  /** The file or folder the failure is about, when there is one. */
  readonly path: string | undefined;
  constructor(code: ContentCacheErrorCode, message: string, options: { path?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.path = options.path;
  }
}

/** A key is not plain JSON, or one of its names is empty or holds a NUL. */
export class InvalidKeyError extends ContentCacheError {
  readonly pointer: string;
  constructor(pointer: string, reason: string) {
    super('CACHE_INVALID_KEY', `invalid cache key at ${pointer || '/'}: ${reason}`);
    this.pointer = pointer;
  }
}

export type RootProblem = 'CACHE_ROOT_INVALID' | 'CACHE_ROOT_IN_WORKSPACE' | 'CACHE_ROOT_UNUSABLE';

/** The store's root is relative, inside the caller's workspace, or cannot be used. */
export class StoreRootError extends ContentCacheError {
  constructor(code: RootProblem, root: string, reason: string, cause?: unknown) {
    super(code, `cache root ${root}: ${reason}`, { path: root, cause });
  }
}

/** The caller's fill function threw. Its error is the `cause`. */
export class FillFailedError extends ContentCacheError {
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('CACHE_FILL_FAILED', `fill failed: ${reason}`, { cause });
  }
}

/** The fill left something in its staging folder beside the destination it was given. */
export class FillOutsideDestinationError extends ContentCacheError {
  constructor(entry: string) {
    super('CACHE_FILL_OUTSIDE_DESTINATION', `fill wrote outside its destination: ${entry}`, { path: entry });
  }
}

export type UnsafeTreeReason =
  | 'missing-destination'
  | 'destination-not-a-directory'
  | 'link-escapes'
  | 'link-absolute'
  | 'link-dangling'
  | 'link-loop'
  | 'special-file'
  /** A `.git` entry in any spelling git itself refuses (`.GIT`, `git~1`, `.git.`, `.g\u200cit`), or a link through one. */
  | 'git-dir'
  /** A `.gitmodules` (in any such spelling) that is a symbolic link. */
  | 'gitmodules-link';

/** The filled tree cannot be published as it is. `path` is relative to the tree. */
export class UnsafeTreeError extends ContentCacheError {
  readonly reason: UnsafeTreeReason;
  constructor(reason: UnsafeTreeReason, path: string, detail: string) {
    super('CACHE_UNSAFE_TREE', `unsafe tree entry ${JSON.stringify(path)}: ${detail}`, { path });
    this.reason = reason;
  }
}

/** The acquisition was cancelled before its commit point: nothing was published. */
export class AcquisitionAbortedError extends ContentCacheError {
  constructor(cause?: unknown) {
    super('CACHE_ABORTED', 'acquisition aborted before publication; nothing was published', { cause });
  }
}

/**
 * A filesystem step failed. `step` names it, `errno` is the system code (ENOSPC, EACCES, ...).
 * `committed` tells whether the object had already been published when the step failed: a
 * committed object is complete and will be reused by the next acquisition.
 */
export class StoreIOError extends ContentCacheError {
  readonly step: string;
  readonly errno: string | undefined;
  readonly committed: boolean;
  constructor(step: string, path: string, cause: unknown, committed = false) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    super('CACHE_IO', `${step} failed for ${path}${errno ? ` (${errno})` : ''}`, { path, cause });
    this.step = step;
    this.errno = errno;
    this.committed = committed;
  }
}

/** The publication lock was lost (its lock folder was removed or went stale under us). */
export class LockCompromisedError extends ContentCacheError {
  constructor(path: string, cause?: unknown) {
    super('CACHE_LOCK_COMPROMISED', `lock ${path} was compromised`, { path, cause });
  }
}

/** A published object's marker is missing or unreadable, or its content no longer hashes to it. */
export class CorruptObjectError extends ContentCacheError {
  readonly objectId: string;
  constructor(objectId: string, path: string, detail: string, cause?: unknown) {
    super('CACHE_CORRUPT_OBJECT', `object ${objectId} is corrupt: ${detail}`, { path, cause });
    this.objectId = objectId;
  }
}

/**
 * A tree pulled from the remote tier does not hash to what its marker claims (tampered or
 * damaged in the registry). It was never published; the store reports it and fills from
 * the origin instead.
 */
export class RemoteMismatchError extends ContentCacheError {
  constructor(
    readonly objectId: string,
    claimed: { digest: string; files: number; bytes: number } | undefined,
    actual: { digest: string; files: number; bytes: number },
  ) {
    const said = claimed ? `${claimed.digest} (${claimed.files} files, ${claimed.bytes} bytes)` : 'nothing';
    super(
      'CACHE_REMOTE_MISMATCH',
      `object ${objectId} from the remote hashes to ${actual.digest} (${actual.files} files, ${actual.bytes} bytes), but its marker claims ${said}`,
    );
  }
}

/**
 * A tree from the remote tier that is not proven to be the content its key names: the
 * acquisition's `verify` refused it (for git, its files do not hash to the tree id the
 * origin gave). Digests and markers only show that the registry's writer was consistent;
 * any machine that can push can be. It was never published; the store warns with this
 * code and fills from the origin instead.
 */
export class RemoteUnprovenError extends ContentCacheError {
  constructor(
    readonly objectId: string,
    readonly contentId: string,
    reason: string,
    cause?: unknown,
  ) {
    super(
      'CACHE_REMOTE_UNPROVEN',
      `object ${objectId} from the remote is not the content ${contentId} names: ${reason}`,
      { cause },
    );
  }
}

/**
 * The remote holds another value for a fact this store learned from the origin. Facts
 * from the remote are never believed; the store reports the disagreement and replaces the
 * remote's value with its own.
 */
export class RemoteFactMismatchError extends ContentCacheError {
  constructor(
    readonly fact: string,
    readonly remoteValue: string,
    readonly value: string,
  ) {
    super(
      'CACHE_REMOTE_FACT_MISMATCH',
      `the remote says ${JSON.stringify(remoteValue)} for fact ${JSON.stringify(fact.replace(/\0/g, ' '))}, the origin says ${JSON.stringify(value)}`,
    );
  }
}
