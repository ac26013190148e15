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

/** Why an archive from outside was refused. */
export type ArchiveProblem =
  | 'absolute-name' // "/etc/passwd"
  | 'drive-letter' // "C:x", "c:/x"
  | 'backslash' // "a\\b": a separator on Windows, so it could climb there
  | 'dot-dot' // any ".." segment, even one that would stay inside
  | 'nul-in-name' // a pax path holding NUL
  | 'empty-name' // a file whose name is empty once "." and "//" are dropped
  | 'link' // symbolic or hard link, wherever it points
  | 'special-entry' // device, FIFO, or an entry type this reader does not know
  | 'global-pax-header' // a pax global header with any key besides `comment`
  | 'duplicate' // two entries with the same final path (or the same on this filesystem)
  | 'file-dir-conflict' // a path that is a file and also a folder of another entry
  | 'directory-with-data' // a directory entry that claims a body
  | 'entry-too-large' // one file over maxEntryBytes
  | 'too-large' // the uncompressed archive over maxBytes
  | 'too-many-files' // more files than maxFiles
  | 'truncated' // gzip or tar data ends early, or the end-of-archive marker is missing
  | 'malformed'; // not gzip, bad tar header checksum, unparseable pax, ...

/**
 * An archive was refused. `entry` is the entry name as the archive spelled it (after pax and
 * GNU long-name headers are applied), when the problem belongs to one entry.
 */
export class ArchiveError extends Error {
  readonly code = 'AIP26_UNSAFE_ARCHIVE';
  readonly reason: ArchiveProblem;
  readonly entry: string | undefined;
  constructor(reason: ArchiveProblem, entry: string | undefined, detail: string, options: { cause?: unknown } = {}) {
    const where = entry === undefined ? 'archive' : `archive entry ${JSON.stringify(entry)}`;
    super(`${where} refused (${reason}): ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.reason = reason;
    this.entry = entry;
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
    super(`${step} failed for ${JSON.stringify(path)}${errno ? ` (${errno})` : ''}`, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.step = step;
    this.path = path;
    this.errno = errno;
  }
}
