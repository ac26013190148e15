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
   * Fetches one commit and its trees into `request.gitdir` (history is not needed) and
   * returns a reader over what it holds. When the gitdir already holds everything asked
   * for (a previous call with the same work folder), nothing is fetched again. The objects
   * are untrusted: the caller hashes every one it uses.
   */
  fetchCommit(request: GitFetchRequest): Promise<GitObjectReader>;
  /**
   * A reader over a gitdir an earlier `fetchCommit` of the same commit filled, without
   * checking or fetching anything first; objects it lacks are fetched by `prefetch`.
   * Optional: used when the caller already walked the trees (see directoryTree).
   */
  openObjects?(request: GitFetchRequest): Promise<GitObjectReader>;
  /**
   * Full ids of the commits reachable from the remote's branches and tags whose id starts
   * with `prefix` (4 to 39 lower-case hex digits), in any order. Needs the history, so it
   * fetches it into `request.gitdir` (commits only, where the server allows a filter).
   * Optional: expandCommit refuses engines without it.
   */
  findCommits?(
    request: GitRemoteRequest & { gitdir: string; maxPackBytes?: number },
    prefix: string,
  ): Promise<string[]>;
}

export interface GitRemoteRequest {
  /**
   * Normalized: `https://host/path`, `ssh://[user@]host[:port]/path` or `[user@]host:path`;
   * never with a password, query or trailing slash.
   */
  url: string;
  /** From the caller's `auth`; an engine sends them with every request and never logs them. */
  headers: Readonly<Record<string, string>>;
  /** Once aborted, the engine stops its requests and writes nothing more. */
  signal: AbortSignal | undefined;
  /**
   * A private folder (0700) the engine may write temporary files into, such as a config
   * file holding the request's headers. The caller made it and removes it, with everything
   * in it, after the operation (or after the last of several sharing it).
   */
  workDir: string;
}

export interface GitFetchRequest extends GitRemoteRequest {
  /** Full 40-hex commit id. */
  commit: string;
  /**
   * A private folder the engine may fill, inside `workDir`; it may not exist yet, or hold
   * what an earlier request with the same work folder fetched. The caller removes it.
   */
  gitdir: string;
  /**
   * `false`: the engine may leave file contents out (a partial clone with only the commit
   * and its trees); the caller then asks for the blobs it needs with `reader.prefetch`.
   * Anything else: every blob of the commit's tree must be readable. An engine without
   * partial clone may ignore `false` and fetch everything.
   */
  blobs?: boolean;
  /**
   * With `blobs: false`, the engine may also leave out every tree this deep or deeper below
   * the commit (0: the commit alone; 1: with its root tree; 2: and the root's subtrees...):
   * to learn one directory's id, the trees on the way to its parent suffice. Undefined:
   * every tree. An engine without partial clone may ignore it.
   */
  treeDepth?: number;
  /**
   * The most bytes one pack received from the server may have (every fetch this request
   * and its reader make: the commit, then the blobs). An engine stops the transfer at that
   * size, before writing past it, and throws GitPackTooLargeError. Undefined: no cap.
   */
  maxPackBytes?: number;
}

export type GitObjectType = 'commit' | 'tree' | 'blob' | 'tag';

export interface GitRawObject {
  type: GitObjectType;
  /** The object's content without git's `<type> <size>\0` header. */
  content: Uint8Array;
}

export interface GitObjectReader {
  /** The object with this id, or undefined when the gitdir does not hold it. */
  read(oid: string): Promise<GitRawObject | undefined>;
  /**
   * Announces objects about to be read (the blobs of a directory, the trees of one level of
   * a walk): the engine fetches the missing ones in one round trip and may load them in
   * batches, so reading them costs neither a request nor a process each. Optional: an
   * engine whose reader already holds every object needs none.
   */
  prefetch?(oids: readonly string[], signal?: AbortSignal): Promise<void>;
  /**
   * Announces a walk: the commit, the trees on the way to `path` and every tree under it
   * are about to be read. An engine that runs a process per batch loads them all at once
   * (the walk then costs two processes, not two per level). Optional, and only a hint:
   * whatever it does not load is read the ordinary way.
   */
  preloadTrees?(commit: string, path: string, signal?: AbortSignal, options?: PreloadOptions): Promise<void>;
  /**
   * The size of an object announced by `prefetch` that the gitdir holds, without loading
   * it; undefined when unknown. Optional: with it, a directory over the byte cap is refused
   * before any of its blobs is loaded into memory or written.
   */
  size?(oid: string): number | undefined;
}

/** What a walk announced with `preloadTrees` reads next, so an engine can fetch and load it together. */
export interface PreloadOptions {
  /**
   * Only the commit and the trees on the way to the path are read, nothing under it
   * (directoryTreeId): an engine that runs a process per batch loads them by name, without
   * listing anything first.
   */
  pathOnly?: boolean;
  /**
   * The blobs under the path are read next (fetchDirectory): an engine that still lacks the
   * directory's trees may fetch them with every blob under them in one request, instead of
   * the trees first and the blobs after. The caps still hold: that pack is capped as every
   * fetch of the request is, and the walk counts entries, depth and bytes before any blob
   * is read or written.
   */
  blobs?: boolean;
  /**
   * With `blobs`: the directory's byte cap. An engine that knows the blobs' sizes may load
   * them with the trees when their total is within it (and within its own memory bound);
   * never when it is not, so a directory over the cap is refused before any blob is loaded.
   */
  maxBytes?: number;
  /**
   * With `blobs`: the directory's tree id, when the caller learned it already (directoryTreeId
   * in the same work folder), so an engine can fetch the directory by it without listing the
   * path first. Only a hint: the walk still hashes every object from the commit down, and a
   * wrong id is a tree the walk never reaches.
   */
  tree?: string;
}
