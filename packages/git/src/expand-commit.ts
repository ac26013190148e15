import { throwIfAborted } from './abort.js';
import { isFullCommitId, isUppercaseCommitId, looksAbbreviated } from './commit-id.js';
import {
  GitAmbiguousCommitError,
  GitCommitNotFoundError,
  GitInvalidArgumentError,
  GitInvalidCommitIdError,
  GitLimitExceededError,
  GitPackTooLargeError,
  GitTransportError,
  GitUppercaseShaError,
} from './errors.js';
import { fetchLimits, packBudget, type FetchLimits } from './limits.js';
import { givenWorkDir, openRemote, type RemoteOptions, withEngineSession } from './remote.js';

export interface ExpandCommitOptions extends RemoteOptions {
  /** `maxBytes` caps the history's pack (packBudget of it); the defaults FetchLimits names where not given. */
  limits?: FetchLimits;
}

/**
 * The full id of the one commit, reachable from the remote's branches and tags, whose id
 * starts with `prefix` (4 to 39 hex digits, either case): what `git rev-parse` does in a
 * clone. A remote only advertises refs, so the engine fetches the history (commits only,
 * where the server allows a filter) into the work folder.
 *
 * - a full 40-hex lower-case id is returned as is, with no network (as resolveRef does);
 * - no match: GitCommitNotFoundError; several: GitAmbiguousCommitError with every candidate;
 * - an engine without `findCommits`: GitInvalidArgumentError naming the engine.
 */
export async function expandCommit(url: string, prefix: string, options: ExpandCommitOptions = {}): Promise<string> {
  const operation = 'expandCommit';
  const { signal } = options;
  const remote = openRemote(url, options);
  if (isFullCommitId(prefix)) return prefix;
  if (typeof prefix === 'string' && isUppercaseCommitId(prefix)) throw new GitUppercaseShaError(prefix);
  if (typeof prefix !== 'string' || !looksAbbreviated(prefix)) throw new GitInvalidCommitIdError(String(prefix));
  const wanted = prefix.toLowerCase();
  const { engine } = remote;
  if (typeof engine.findCommits !== 'function') {
    throw new GitInvalidArgumentError(
      'engine',
      `the ${engine.name} engine cannot search a remote's history (no findCommits)`,
    );
  }
  const given = givenWorkDir(options);
  const { maxBytes } = fetchLimits(options.limits);
  throwIfAborted(signal, operation);

  return withEngineSession(operation, remote.url, options, given, async ({ headers, work, calls }) => {
    // The history's pack is capped like a directory's: isomorphic-git fetches it with every
    // tree and blob, and a server may send anything.
    const request = {
      url: remote.url,
      headers,
      signal,
      workDir: work.path,
      gitdir: work.gitdir,
      maxPackBytes: packBudget(maxBytes),
    };
    const found = await calls.run(engine.findCommits!(request, wanted)).catch((error: unknown) => {
      if (error instanceof GitPackTooLargeError) {
        throw new GitLimitExceededError(
          'bytes',
          maxBytes,
          remote.url,
          '',
          `the history's pack passed ${error.max} bytes`,
          error,
        );
      }
      throw error;
    });
    // The engine's answer is checked like a server's: ids only, and only matching ones.
    if (!Array.isArray(found) || found.some((id) => !isFullCommitId(id) || !id.startsWith(wanted))) {
      throw new GitTransportError(remote.url, `the ${engine.name} engine listed ids that do not start with ${wanted}`);
    }
    const candidates = [...new Set(found)].sort();
    if (candidates.length === 0) throw new GitCommitNotFoundError(wanted, remote.url);
    if (candidates.length > 1) throw new GitAmbiguousCommitError(wanted, candidates, remote.url);
    return candidates[0] as string;
  });
}
