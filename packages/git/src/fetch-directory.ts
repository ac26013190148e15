import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { raceAbort, settled, throwIfAborted } from './abort.js';
import { assertFullCommitId } from './commit-id.js';
import { authHeaders, secretsOf } from './credentials.js';
import { GitDestinationExistsError, GitError, GitInvalidArgumentError, GitIoError } from './errors.js';
import { engineError, finalError, openRemote, type RemoteOptions } from './remote.js';
import { normalizeDirectoryPath } from './repo-path.js';
import { selectDirectory } from './select-directory.js';
import { writeEntries } from './write-entries.js';

export interface FetchDirectoryOptions extends RemoteOptions {
  /** Folder the temporary gitdir is made in (and removed from); `os.tmpdir()` by default. */
  privateDir?: string;
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

/** How long an aborted engine gets to unwind before its private folder is removed anyway. */
const UNWIND_MS = 2000;

/**
 * Writes the directory `path` of exactly `commit` into `dest`, which must not exist yet:
 * files with their executable bit, symlinks that stay inside the directory, nothing else
 * of the repository. Every object used is hashed against its id, the commit included.
 *
 * The engine works in a private temporary gitdir, removed before this returns or rejects.
 * On any failure or abort `dest` is removed too: it is ours, since we created it.
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
  throwIfAborted(signal, operation);
  await claim(destination);

  let gitdir: string | undefined;
  let engineWork: Promise<unknown> | undefined;
  let secrets: readonly string[] = [];
  let done = false;
  try {
    gitdir = await privateGitdir(options.privateDir ?? tmpdir());
    // The host's own callback: what it throws passes through as is (after the cleanup below).
    const headers = await authHeaders(options.auth, remote.url);
    secrets = secretsOf(headers);
    throwIfAborted(signal, operation);
    const work = remote.engine.fetchCommit({ url: remote.url, headers, signal, commit, gitdir }).catch((error: unknown) => {
      throw engineError(error, remote.url);
    });
    engineWork = work;
    const reader = await raceAbort(work, signal, operation);
    throwIfAborted(signal, operation);
    const selected = await selectDirectory(reader, remote.url, commit, directory, signal);
    const written = await writeEntries(selected.entries, destination, reader, signal).catch((error: unknown) => {
      throw error instanceof GitError ? error : new GitIoError(destination, 'write into', error);
    });
    done = true;
    return { commit, tree: selected.tree, path: directory, ...written };
  } catch (error) {
    throw finalError(error, operation, signal, secrets);
  } finally {
    // An aborted engine may still be unwinding; its file system refuses every write once the
    // signal has fired, so waiting is only politeness, and bounded.
    if (engineWork) await settled(engineWork, UNWIND_MS);
    if (gitdir) await rm(gitdir, { recursive: true, force: true, maxRetries: 3 });
    if (!done) await rm(destination, { recursive: true, force: true, maxRetries: 3 });
  }
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

async function privateGitdir(parent: string): Promise<string> {
  try {
    return await mkdtemp(join(parent, 'agentproto-git-'));
  } catch (error) {
    throw new GitIoError(parent, 'make a private gitdir in', error);
  }
}
