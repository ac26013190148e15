import { BundleSizeError, SourceResolutionError } from './errors.js';
import type { Overlay } from './overlay.js';
import type { PlannedSource } from './plan.js';
import type { SourceTally } from './resolve-local.js';
import type { GithubAccess } from './types.js';
import { readArchive } from './archive.js';

type GithubSource = Extract<PlannedSource, { kind: 'github' }>;

export interface GithubResolution extends SourceTally {
  /** The full commit the ref resolved to. */
  commit: string;
}

const FULL_SHA = /^[0-9a-f]{40}$/;

/**
 * A `github` source: the ref resolved to a commit through the host's connector (the only
 * place credentials live), the directory fetched as a tar.gz of its files, checked like any
 * archive from outside, and laid under `as` (default: the source's own `path`).
 */
export async function resolveGithub(
  source: GithubSource,
  github: GithubAccess | undefined,
  overlay: Overlay,
  remaining: { bytes: number; files: number },
): Promise<GithubResolution> {
  const fail = (
    reason: 'no-github-connector' | 'ref-unresolved' | 'fetch-failed' | 'unsafe-archive',
    detail: string,
    cause?: unknown,
  ): never => {
    throw new SourceResolutionError(source.label, source.declaration, reason, detail, { cause });
  };
  if (!github) return fail('no-github-connector', 'a github source needs a github connector');
  let commit: string;
  try {
    commit = FULL_SHA.test(source.ref) ? source.ref : await github.resolveRef(source.repo, source.ref);
  } catch (error) {
    return fail(
      'ref-unresolved',
      `cannot resolve ${JSON.stringify(source.ref)} in ${source.repo}: ${messageOf(error)}`,
      error,
    );
  }
  if (!FULL_SHA.test(commit))
    return fail(
      'ref-unresolved',
      `the connector resolved ${JSON.stringify(source.ref)} to ${JSON.stringify(commit)}, not a full commit`,
    );
  let archive: Buffer;
  try {
    // The bundle's caps go to the connector so they hold while fetching, not only once the
    // archive is here: a 400 MB directory is stopped at the cap, not downloaded and refused.
    archive = await github.fetch(source.repo, commit, source.path === '' ? undefined : source.path, {
      maxBytes: Math.max(0, remaining.bytes),
      maxFiles: remaining.files,
    });
  } catch (error) {
    const limit = overLimit(error);
    // The fetch stopped past the cap, so at least one more than the cap was reached.
    if (limit === 'bytes')
      throw new BundleSizeError(
        'bytes',
        remaining.bytes + overlay.totalBytes,
        remaining.bytes + overlay.totalBytes + 1,
        source.label,
      );
    if (limit === 'files') throw new BundleSizeError('files', remaining.files, remaining.files + 1, source.label);
    return fail(
      'fetch-failed',
      `cannot fetch ${source.repo}@${commit}${source.path ? `:${source.path}` : ''}: ${messageOf(error)}`,
      error,
    );
  }
  let files: Map<string, { data: Buffer; executable: boolean }>;
  try {
    files = await readArchive(archive, remaining);
  } catch (error) {
    return fail('unsafe-archive', `the fetched archive was refused: ${messageOf(error)}`, error);
  }
  const targetRoot = source.as === undefined ? source.path : source.as.replace(/\/$/, '');
  const tally: GithubResolution = { commit, files: 0, bytes: 0 };
  for (const [path, file] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    await overlay.set(
      targetRoot === '' ? path : `${targetRoot}/${path}`,
      { ...file, source: source.label },
      source.declaration,
    );
    tally.files += 1;
    tally.bytes += file.data.length;
  }
  return tally;
}

/**
 * The bundle cap a connector's fetch stopped at (githubConnector: GIT_LIMIT_EXCEEDED from
 * @agentproto/git), found along the `cause` chain: a fetch made inside a content store's
 * fill reaches here wrapped (CACHE_FILL_FAILED, once per store layer), and must still be
 * reported as the bundle being too large, not as a failed fetch.
 */
function overLimit(error: unknown): 'bytes' | 'files' | undefined {
  let current = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth += 1) {
    const { code, limit, cause } = current as { code?: unknown; limit?: unknown; cause?: unknown };
    if (code === 'GIT_LIMIT_EXCEEDED') return limit === 'bytes' || limit === 'files' ? limit : undefined;
    current = cause;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
