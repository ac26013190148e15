/**
 * The three ways the tar layer fails. Callers branch on `code` (and `reason`); messages are
 * for humans and name the offending path JSON-escaped, so a name holding control characters
 * or quotes cannot forge a line of a log. No error carries file contents.
 */

/** Why a bundle's input entries cannot be packed. */
export type BundleEntryProblem = 'invalid-path' | 'duplicate-path' | 'file-is-parent' | 'size-changed';

/**
 * `writeBundle` refused its input. `path` is the entry at fault; for `file-is-parent`,
 * `other` is the entry below it (`path` is a file and also a folder of `other`), and for
 * `duplicate-path` both are the same path.
 */
export class BundleEntryError extends Error {
  readonly code = 'AIP26_BUNDLE_ENTRY';
  readonly reason: BundleEntryProblem;
  readonly path: string;
  readonly other: string | undefined;
  constructor(reason: BundleEntryProblem, path: string, detail: string, other?: string) {
    super(`bundle entry ${JSON.stringify(path)}: ${detail}`);
    this.name = new.target.name;
    this.reason = reason;
    this.path = path;
    this.other = other;
  }
}

/**
 * Extraction could not use its destination, or a filesystem step failed. Nothing is left
 * at `dest` when this is thrown. `step` names the step, `errno` the system code.
 */
export class ExtractIOError extends Error {
  readonly code = 'AIP26_EXTRACT_IO';
  readonly step: string;
  readonly path: string;
  readonly errno: string | undefined;
  constructor(step: string, path: string, cause?: unknown) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(
      `${step} failed for ${JSON.stringify(path)}${errno ? ` (${errno})` : ''}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = new.target.name;
    this.step = step;
    this.path = path;
    this.errno = errno;
  }
}
