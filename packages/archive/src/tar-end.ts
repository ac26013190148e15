import type { Extract, Header } from 'tar-stream';
import { ArchiveError } from './errors.js';

/** tar-stream's header step (pinned version 3.2.2): what TarEndMarker wraps to see empty blocks. */
interface HeaderStep {
  _header: Header | null;
  _buffer: { shifted: number };
  _consumeHeader(): boolean;
}

/**
 * Where the tar's end-of-archive marker is: the first two header blocks in a row that
 * tar-stream reads as empty (it then goes on reading, and would hand on entries found after
 * them; GNU tar, bsdtar and Go's archive/tar stop there). Seen by wrapping tar-stream's
 * header step: a header block consumed while `_header` comes out null is an empty block.
 */
export class TarEndMarker {
  /** Offset in the tar of the marker's first block, once seen. */
  at: number | undefined;
  private lastEmpty: number | undefined;

  constructor(extract: Extract) {
    const marker = this;
    const internals = extract as unknown as HeaderStep;
    const consumeHeader = internals._consumeHeader;
    internals._consumeHeader = function (this: HeaderStep): boolean {
      const before = this._buffer.shifted;
      const result = consumeHeader.call(this);
      if (this._buffer.shifted - before >= 512 && this._header === null) marker.empty(before);
      return result;
    };
  }

  private empty(offset: number): void {
    if (this.at !== undefined) return;
    if (this.lastEmpty === offset - 512) this.at = this.lastEmpty;
    else this.lastEmpty = offset;
  }

  /**
   * Past the marker nothing is part of the archive: tar-stream's complaint about what it
   * found there (a header that does not parse, a partial block) means bytes after the end.
   */
  explain(error: unknown): unknown {
    if (this.at === undefined || error instanceof ArchiveError || !isTarStreamError(error)) return error;
    return new ArchiveError(
      'trailing-data',
      undefined,
      `bytes other than zeros after the end-of-archive marker (at byte ${this.at} of the tar)`,
      { cause: error },
    );
  }

  /**
   * The archive ends with its marker, and nothing but zeros follows it: GNU tar pads the
   * archive with zeros to its record size (10240 bytes), any other byte there is data some
   * reader might take for part of the archive. A tar without the marker may have been cut
   * exactly between two entries and would read as a smaller archive. `dataEnd` is one past
   * the last byte of the tar stream that is not zero.
   */
  checkTail(dataEnd: number): void {
    if (this.at === undefined)
      throw new ArchiveError('truncated', undefined, 'the tar ends without its end-of-archive marker');
    if (dataEnd > this.at)
      throw new ArchiveError(
        'trailing-data',
        undefined,
        `bytes other than zeros after the end-of-archive marker (at byte ${this.at} of the tar)`,
      );
  }
}

/** tar-stream's error messages (3.2.2), by what they mean. */
export const TAR_TRUNCATED = new Set(['Unexpected end of data']);
export const TAR_MALFORMED_PREFIXES = ['Invalid tar header', 'Header exceeds max size', 'Invalid header'];

function isTarStreamError(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return (
    typeof message === 'string' &&
    (TAR_TRUNCATED.has(message) || TAR_MALFORMED_PREFIXES.some((prefix) => message.startsWith(prefix)))
  );
}
