import type { RemoteRef } from './remote-refs.js';

/**
 * What moves bytes between a git server and this machine. The public functions do every
 * check themselves (URL rules, ref names, credentials, hashes of every object used, tree
 * safety, writing, cleanup), so an engine is only transport and object storage, and a new
 * one (system git over SSH, say) inherits all guarantees without repeating them.
 */
export interface GitEngine {
  /** For messages: `isomorphic-git`, `system-git`, … */
  readonly name: string;
  /** URL schemes it speaks, with the colon: `['https:', 'http:']`. */
  readonly protocols: readonly string[];
  /** Every ref of the remote with peeled tags and HEAD's symref, like `git ls-remote`. */
  listRefs(request: GitRemoteRequest): Promise<RemoteRef[]>;
  /**
   * Fetches one commit and its tree into `request.gitdir` (history is not needed) and
   * returns a reader over what it received. The objects are untrusted: the caller hashes
   * every one it uses.
   */
  fetchCommit(request: GitFetchRequest): Promise<GitObjectReader>;
}

export interface GitRemoteRequest {
  /** Normalized: `https://host/path`, no credentials, query or trailing slash. */
  url: string;
  /** From the caller's `auth`; an engine sends them with every request and never logs them. */
  headers: Readonly<Record<string, string>>;
  /** Once aborted, the engine stops its requests and writes nothing more. */
  signal: AbortSignal | undefined;
}

export interface GitFetchRequest extends GitRemoteRequest {
  /** Full 40-hex commit id. */
  commit: string;
  /** An empty private folder the engine may fill; the caller removes it afterwards. */
  gitdir: string;
}

export type GitObjectType = 'commit' | 'tree' | 'blob' | 'tag';

export interface GitRawObject {
  type: GitObjectType;
  /** The object's content without git's `<type> <size>\0` header. */
  content: Uint8Array;
}

export interface GitObjectReader {
  /** The object with this id, or undefined when the fetch did not bring it. */
  read(oid: string): Promise<GitRawObject | undefined>;
}
