/** Why an archive from outside was refused. */
export type ArchiveProblem =
  | 'absolute-name' // "/etc/passwd"
  | 'drive-letter' // "C:x", "c:/x"
  | 'backslash' // "a\\b": a separator on Windows, so it could climb there
  | 'dot-dot' // any ".." segment, even one that would stay inside
  | 'nul-in-name' // a pax path holding NUL
  | 'git-metadata' // ".git" in any spelling git refuses (".GIT", "git~1", ".git."), a link to one, or a ".gitmodules" link
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
  | 'trailing-data' // an entry, or any byte but zeros, after the end-of-archive marker or after the gzip stream
  | 'gzip-member' // a second gzip member after the first
  | 'malformed'; // not gzip, bad tar header checksum, unparseable pax, ...

/**
 * An archive was refused. `entry` is the entry name as the archive spelled it (after pax and
 * GNU long-name headers are applied), when the problem belongs to one entry.
 */
export class ArchiveError extends Error {
  readonly code = 'UNSAFE_ARCHIVE';
  readonly reason: ArchiveProblem;
  readonly entry: string | undefined;
  constructor(reason: ArchiveProblem, entry: string | undefined, detail: string, options: { cause?: unknown } = {}) {
    const where = entry === undefined ? 'archive' : `archive entry ${JSON.stringify(entry)}`;
    super(
      `${where} refused (${reason}): ${detail}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.reason = reason;
    this.entry = entry;
  }
}
