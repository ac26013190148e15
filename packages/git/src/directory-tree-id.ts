import { throwIfAborted } from './abort.js';
import { assertFullCommitId } from './commit-id.js';
import { overPack, type DirectoryTree, type FetchDirectoryOptions } from './fetch-directory.js';
import { fetchLimits, packBudget } from './limits.js';
import { givenWorkDir, openRemote, withEngineSession } from './remote.js';
import { normalizeDirectoryPath } from './repo-path.js';
import { treeOnPath } from './select-directory.js';
import { rememberTreeId } from './walk-memo.js';

/**
 * The tree id of the directory `path` of exactly `commit`, from the fewest objects that
 * prove it: the commit and the trees on the way to the directory, each hashed to its id (a
 * directory's id is written in its parent tree, so the directory's own tree is not needed).
 * What a cache asks the origin before it believes a tree from anywhere else: the tree's
 * files must then hash to this id.
 *
 * The engine is asked for the commit with trees only down to the directory's parent
 * (`treeDepth`); system git fetches exactly that (`--filter=combine:blob:none+tree:<depth>`),
 * an engine without partial clone fetches the whole commit. Unlike directoryTree, nothing
 * under the directory is walked or checked: use directoryTree when its files come next.
 */
export async function directoryTreeId(
  url: string,
  commit: string,
  path: string,
  options: FetchDirectoryOptions = {},
): Promise<DirectoryTree> {
  const operation = 'directoryTreeId';
  const { signal } = options;
  const remote = openRemote(url, options);
  assertFullCommitId(commit);
  const directory = normalizeDirectoryPath(path);
  const parts = directory === '' ? [] : directory.split('/');
  const given = givenWorkDir(options);
  const limits = fetchLimits(options.limits);
  throwIfAborted(signal, operation);

  return withEngineSession(operation, remote.url, options, given, async ({ headers, work, calls }) => {
    const request = {
      url: remote.url,
      headers,
      signal,
      workDir: work.path,
      gitdir: work.gitdir,
      commit,
      blobs: false,
      treeDepth: parts.length,
      maxPackBytes: packBudget(limits.maxBytes),
    };
    // An engine's pack cap is the byte cap of the directory, as in fetchDirectory.
    const reader = await calls
      .run(remote.engine.fetchCommit(request))
      .catch(overPack({ maxBytes: limits.maxBytes, url: remote.url, path: directory }));
    throwIfAborted(signal, operation);
    // A hint: an engine reading through git processes loads the commit and the trees on
    // the way in one batch, by name, not one process per level (nothing deeper is read).
    await calls.run(reader.preloadTrees?.(commit, directory, signal, { pathOnly: true }) ?? Promise.resolve());
    const tree = await calls.run(treeOnPath(reader, remote.url, commit, directory, signal, operation));
    if (given !== undefined) rememberTreeId(work.gitdir, commit, directory, tree);
    return { commit, tree, path: directory };
  });
}
