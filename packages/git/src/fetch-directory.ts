import { mkdir, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { throwIfAborted } from './abort.js';
import { assertFullCommitId } from './commit-id.js';
import {
  GitDestinationExistsError,
  GitError,
  GitInvalidArgumentError,
  GitIoError,
  GitLimitExceededError,
  GitPackTooLargeError,
} from './errors.js';
import { fetchLimits, packBudget, type FetchLimits } from './limits.js';
import { givenWorkDir, openRemote, type RemoteOptions, withEngineSession } from './remote.js';
import { normalizeDirectoryPath } from './repo-path.js';
import { selectDirectory, selectWalked, walkDirectory } from './select-directory.js';
import { rememberWalk, takeTreeId, takeWalk } from './walk-memo.js';
import { writeEntries } from './write-entries.js';

export interface FetchDirectoryOptions extends RemoteOptions {
  /** Caps on entries, bytes and depth; the defaults FetchLimits names where not given. */
  limits?: FetchLimits;
}

/** What directoryTree learns: the directory's tree id, with no file content fetched. */
export interface DirectoryTree {
  /** The commit, as asked and as verified. */
  commit: string;
  /** Git tree id of the directory: the same content has the same id at any commit. */
  tree: string;
  /** The directory, normalized (`''` for the whole tree). */
  path: string;
}

export interface FetchedDirectory {
  /** The commit, as asked and as verified. */
  commit: string;
  /** Git tree id of the directory: the same content has the same id at any commit. */
  tree: string;
  /** The directory, normalized (`''` for the whole tree). */
  path: string;
  /** Regular files written. */
  files: number;
  /** Symlinks written (all of them stay inside the directory). */
  symlinks: number;
  /** Bytes of the regular files. */
  bytes: number;
  /** Submodules met: each is written as an empty folder, like `git clone` without --recurse-submodules. */
  submodules: Array<{ path: string; commit: string }>;
}

/**
 * Writes the directory `path` of exactly `commit` into `dest`, which must not exist yet:
 * files with their executable bit, symlinks that stay inside the directory, nothing else
 * of the repository. Every object used is hashed against its id, the commit included.
 *
 * The engine is asked for the commit and its trees only (`blobs: false`), then for exactly
 * the blobs of the directory in one `prefetch`. With `options.workDir`, what an earlier
 * operation with the same folder fetched (directoryTree) is used again, so only those
 * blobs travel. Without it, the engine works in a temporary folder removed before this
 * returns or rejects. On any failure or abort `dest` is removed too: it is ours, since we
 * created it.
 */
export async function fetchDirectory(
  url: string,
  commit: string,
  path: string,
  dest: string,
  options: FetchDirectoryOptions = {},
): Promise<FetchedDirectory> {
  const operation = 'fetchDirectory';
  const { signal } = options;
  // Every argument is checked before anything is created or sent.
  const remote = openRemote(url, options);
  assertFullCommitId(commit);
  const directory = normalizeDirectoryPath(path);
  if (typeof dest !== 'string' || dest === '') throw new GitInvalidArgumentError('dest', 'must be a non-empty path');
  const destination = resolve(dest);
  const given = givenWorkDir(options);
  const limits = fetchLimits(options.limits);
  const cap = { ...limits, url: remote.url, path: directory };
  throwIfAborted(signal, operation);
  await claim(destination);

  try {
    return await withEngineSession(operation, remote.url, options, given, async ({ headers, work, calls }) => {
      // The caps hold while fetching: the engine stops a pack no directory within them
      // needs, the walk counts entries and depth from the trees before any blob is asked
      // for, sizes are added up before a blob is loaded where the engine knows them, and
      // writeEntries counts bytes before each write.
      const request = {
        url: remote.url,
        headers,
        signal,
        workDir: work.path,
        gitdir: work.gitdir,
        commit,
        blobs: false,
        maxPackBytes: packBudget(limits.maxBytes),
      };
      // directoryTree with this work folder walked the trees already: use its walk.
      const walked = given === undefined ? undefined : takeWalk(work.gitdir, commit, directory);
      // directoryTreeId with this work folder named the directory: fetch it by that id.
      const named = given === undefined ? undefined : takeTreeId(work.gitdir, commit, directory);
      const { engine } = remote;
      const reader = await calls
        .run(walked && engine.openObjects ? engine.openObjects(request) : engine.fetchCommit(request))
        .catch(overPack(cap));
      throwIfAborted(signal, operation);
      // The walk, one prefetch of exactly the directory's blobs, the link checks: engine work.
      const selected = await calls
        .run(
          walked && engine.openObjects
            ? selectWalked(reader, walked, signal, operation, cap)
            : selectDirectory(reader, remote.url, commit, directory, signal, operation, limits, named),
        )
        .catch(overPack(cap));
      const written = await writeEntries(selected.entries, destination, reader, signal, cap).catch((error: unknown) => {
        throw error instanceof GitError ? error : new GitIoError(destination, 'write into', error);
      });
      return { commit, tree: selected.tree, path: directory, ...written };
    });
  } catch (error) {
    // Only once the engine has unwound (its processes are killed, its file system refuses
    // every write), so nothing recreates a file in it afterwards. It is ours: we created it.
    await rm(destination, { recursive: true, force: true, maxRetries: 3 });
    throw error;
  }
}

/**
 * The tree id of the directory `path` of exactly `commit`, without fetching any file
 * content: the engine is asked for the commit and its trees only (`blobs: false`), and the
 * trees are walked with every check fetchDirectory makes on them (the commit hashes to its
 * id, the path is a directory, each tree hashes to its id, no entry name is unsafe). Link
 * targets are blobs, so they are checked by fetchDirectory, not here.
 *
 * The tree id is a content id: when a cache already holds it, nothing more is needed.
 * Otherwise pass the same `options.workDir` to fetchDirectory, which then fetches only the
 * directory's blobs.
 */
export async function directoryTree(
  url: string,
  commit: string,
  path: string,
  options: FetchDirectoryOptions = {},
): Promise<DirectoryTree> {
  const operation = 'directoryTree';
  const { signal } = options;
  const remote = openRemote(url, options);
  assertFullCommitId(commit);
  const directory = normalizeDirectoryPath(path);
  const given = givenWorkDir(options);
  const limits = fetchLimits(options.limits);
  const cap = { ...limits, url: remote.url, path: directory };
  throwIfAborted(signal, operation);

  return withEngineSession(operation, remote.url, options, given, async ({ headers, work, calls }) => {
    // The same caps as fetchDirectory: an engine without partial clone fetches the whole
    // commit here, and a tree past the entry or depth cap is refused before its blobs.
    const request = {
      url: remote.url,
      headers,
      signal,
      workDir: work.path,
      gitdir: work.gitdir,
      commit,
      blobs: false,
      maxPackBytes: packBudget(limits.maxBytes),
    };
    const reader = await calls.run(remote.engine.fetchCommit(request)).catch(overPack(cap));
    throwIfAborted(signal, operation);
    const walk = await calls.run(walkDirectory(reader, remote.url, commit, directory, signal, operation, limits));
    if (given !== undefined) rememberWalk(work.gitdir, commit, directory, walk);
    return { commit, tree: walk.tree, path: directory };
  });
}

/** An engine's pack cap, reported as the byte limit of the directory it was fetched for. */
export function overPack(cap: { maxBytes: number; url: string; path: string }): (error: unknown) => never {
  return (error) => {
    if (error instanceof GitPackTooLargeError) {
      throw new GitLimitExceededError(
        'bytes',
        cap.maxBytes,
        cap.url,
        cap.path,
        `the server's pack passed ${error.max} bytes`,
        error,
      );
    }
    throw error;
  };
}

/**
 * Creates `dest` (and missing parents). mkdir without `recursive` fails if it exists, which
 * is the check: testing first and creating after would race with another writer.
 */
async function claim(dest: string): Promise<void> {
  try {
    await mkdir(dirname(dest), { recursive: true });
  } catch (error) {
    throw new GitIoError(dirname(dest), 'create', error);
  }
  try {
    await mkdir(dest);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') throw new GitDestinationExistsError(dest, error);
    throw new GitIoError(dest, 'create', error);
  }
}
