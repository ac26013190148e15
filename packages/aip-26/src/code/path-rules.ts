import { findPathTwins, normalizeManifestPath } from '../paths/index.js';
import type { ManifestPathField } from '../paths/index.js';

/**
 * A workspace path of a source, joined to the folder its manifest is relative to. Both
 * halves are normalised and free of `..`, so the join cannot leave the workspace.
 */
export function safeWorkspacePath(
  field: ManifestPathField,
  raw: string,
  base: string,
): { path: string; directory: boolean } {
  const normalized = normalizeManifestPath(field, raw);
  return {
    path: base === '' ? normalized.path : normalized.path === '' ? base : `${base}/${normalized.path}`,
    directory: normalized.trailingSlash,
  };
}

/** A bundle or remote path of a source; `''` is the root where the field allows it. */
export function safePath(field: ManifestPathField, raw: string): { path: string; directory: boolean } {
  const normalized = normalizeManifestPath(field, raw);
  return { path: normalized.path, directory: normalized.trailingSlash || normalized.isRoot };
}

/** Pairs of bundle paths that differ only by letter case (one file on macOS and Windows). */
export function findCaseTwins(paths: Iterable<string>): [string, string][] {
  return findPathTwins(paths)
    .filter((twin) => twin.kind === 'case')
    .map((twin) => [twin.first, twin.second]);
}
