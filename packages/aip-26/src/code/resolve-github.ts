import { SourceResolutionError } from './errors.js';
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
export async function resolveGithub(source: GithubSource, github: GithubAccess | undefined, overlay: Overlay, remaining: { bytes: number; files: number }): Promise<GithubResolution> {
  const fail = (reason: 'no-github-connector' | 'ref-unresolved' | 'fetch-failed' | 'unsafe-archive', detail: string, cause?: unknown): never => {
    throw new SourceResolutionError(source.label, source.declaration, reason, detail, { cause });
  };
  if (!github) return fail('no-github-connector', 'a github source needs a github connector');
  let commit: string;
  try {
    commit = FULL_SHA.test(source.ref) ? source.ref : await github.resolveRef(source.repo, source.ref);
  } catch (error) {
    return fail('ref-unresolved', `cannot resolve ${JSON.stringify(source.ref)} in ${source.repo}: ${messageOf(error)}`, error);
  }
  if (!FULL_SHA.test(commit)) return fail('ref-unresolved', `the connector resolved ${JSON.stringify(source.ref)} to ${JSON.stringify(commit)}, not a full commit`);
  let archive: Buffer;
  try {
    archive = await github.fetch(source.repo, commit, source.path === '' ? undefined : source.path);
  } catch (error) {
    return fail('fetch-failed', `cannot fetch ${source.repo}@${commit}${source.path ? `:${source.path}` : ''}: ${messageOf(error)}`, error);
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
    overlay.set(targetRoot === '' ? path : `${targetRoot}/${path}`, { ...file, source: source.label }, source.declaration);
    tally.files += 1;
    tally.bytes += file.data.length;
  }
  return tally;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
