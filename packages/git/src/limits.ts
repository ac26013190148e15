import { GitInvalidArgumentError } from './errors.js';

/**
 * Caps on what one fetch may write. A repository is the attacker's: without them a
 * 400 MB or 60,000-file directory is fetched, written and published whole. Each cap is
 * enforced while fetching, before anything is written past it (see fetchDirectory).
 */
export interface FetchLimits {
  /** Entries written under the directory: files, links, folders and submodules. Default 10,000. */
  maxFiles?: number;
  /** Bytes of the regular files (as stored, uncompressed). Default 256 MiB. */
  maxBytes?: number;
  /** Path depth under the directory: `a` is 1, `a/b/c` is 3. Default 32. */
  maxDepth?: number;
}

/** What a host would accept from a stranger's repository for one skill or bundle source. */
export const DEFAULT_FETCH_LIMITS: Readonly<Required<FetchLimits>> = Object.freeze({
  maxFiles: 10_000,
  maxBytes: 256 * 1024 * 1024,
  maxDepth: 32,
});

/** The defaults with the caller's caps over them, each checked: a cap is a non-negative safe integer. */
export function fetchLimits(given: FetchLimits | undefined): Required<FetchLimits> {
  const limits = { ...DEFAULT_FETCH_LIMITS };
  for (const name of ['maxFiles', 'maxBytes', 'maxDepth'] as const) {
    const value = given?.[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0)
      throw new GitInvalidArgumentError(`limits.${name}`, 'must be a non-negative integer');
    limits[name] = value;
  }
  return limits;
}

/**
 * The most bytes one pack received from the server may have. A pack holds objects
 * zlib-compressed, each with a few bytes of header: content that does not compress grows
 * by well under 1/64, so a directory within `maxBytes` always fits, and a pack past this
 * size cannot be a directory within the cap (the commit and its trees ride along: the
 * extra MiB). For an engine without partial clone (isomorphic-git) the pack is the whole
 * commit, so there the cap is on the whole commit.
 */
export function packBudget(maxBytes: number): number {
  return maxBytes + Math.ceil(maxBytes / 64) + 1024 * 1024;
}
