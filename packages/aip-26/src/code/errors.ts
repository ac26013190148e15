import type { Source } from './types.js';

export type SourceProblem =
  | 'unsafe-path'
  | 'cycle'
  | 'too-deep'
  | 'not-found'
  | 'not-a-code-workspace'
  | 'invalid-manifest'
  | 'unsafe-link'
  | 'nul-in-content'
  | 'file-directory-clash'
  | 'case-twin'
  | 'invalid-repo'
  | 'ref-unresolved'
  | 'pin-required'
  | 'no-github-connector'
  | 'fetch-failed'
  | 'unsafe-archive'
  | 'read-failed';

/**
 * A source could not be resolved. `source` names it (its index, and the chain of `ref`s that
 * led to it), `declaration` is the source as the manifest wrote it, `reason` is stable.
 */
export class SourceResolutionError extends Error {
  readonly code = 'AIP26_SOURCE_UNRESOLVED';
  constructor(
    readonly source: string,
    readonly declaration: Source | string,
    readonly reason: SourceProblem,
    detail: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `${source} ${JSON.stringify(declaration)}: ${detail}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'SourceResolutionError';
  }
}

/** The merged bundle is over a limit; raised while reading, as soon as it is known. */
export class BundleSizeError extends Error {
  readonly code = 'AIP26_BUNDLE_TOO_LARGE';
  constructor(
    readonly limit: 'bytes' | 'files',
    readonly max: number,
    readonly actual: number,
    readonly source: string,
  ) {
    super(
      limit === 'bytes'
        ? `bundle too large: over ${max} bytes (${actual} reached while reading ${source})`
        : `bundle has too many files: over ${max} (${actual} reached while reading ${source})`,
    );
    this.name = 'BundleSizeError';
  }
}

/**
 * `defineCodeToFile` could not write its output file. `path` is the file asked for, `step`
 * the filesystem step that failed (`create`, `write`, `close`, `rename`), `errno` the
 * system code. The file at `path` is as it was before the call.
 */
export class BundleWriteError extends Error {
  readonly code = 'AIP26_BUNDLE_WRITE';
  /** `create`, `write`, `close` or `rename`. */
  readonly step: string;
  /** The file asked for (not the temporary file beside it). */
  readonly path: string;
  /** The system error code (`ENOSPC`, `EACCES`, ...), when there is one. */
  readonly errno: string | undefined;
  constructor(step: string, path: string, cause?: unknown) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(
      `writing the bundle to ${JSON.stringify(path)} failed at ${step}${errno ? ` (${errno})` : ''}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = new.target.name;
    this.step = step;
    this.path = path;
    this.errno = errno;
  }
}
