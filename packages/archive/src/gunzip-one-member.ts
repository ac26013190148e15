import { Transform, type TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';
import { ArchiveError } from './errors.js';

/**
 * Inflates exactly one gzip member (RFC 1952) and refuses anything after it but zero bytes.
 *
 * Node's gunzip inflates every member it finds and hands on their concatenation, so a tar
 * gzipped once and a second member appended reads as one archive to Node but as the first
 * member alone to readers that stop there (Go's `gzip.Reader` with multistream off, many
 * scanners): what was checked would not be what is extracted. Here the gzip header is
 * parsed by hand, the deflate data goes through a raw inflate, whose `bytesWritten` tells
 * exactly where the deflate stream ended, and the 8-byte trailer (CRC-32 and size) is
 * checked against what was inflated. After the trailer only zero bytes may follow (some
 * writers pad to a block); a second member or any other byte stops the read with
 * ArchiveError (`gzip-member`, `trailing-data`) before a byte of it is inflated.
 *
 * Input reaches the inflater in pieces of at least `chunkSize` bytes (the last may be
 * shorter): each write is a trip through libuv's thread pool and back, so a source read in
 * 64 KiB chunks (a file stream's default) would otherwise cost a trip per chunk whatever
 * `chunkSize` says of the output. Backpressure holds both ways: at most `chunkSize` bytes
 * of input are held before the inflater has taken them, and the inflater pauses while this
 * stream's reader is full, so a gzip bomb is inflated no faster than the consumer (the tar
 * meter, which counts and stops it) reads.
 */
export class GunzipOneMember extends Transform {
  private readonly inflate: zlib.InflateRaw;
  private state: 'header' | 'body' | 'trailer' = 'header';
  private header: Buffer = Buffer.alloc(0);
  /** Bytes handed to the raw inflater so far. */
  private fed = 0;
  /** The bytes after the deflate stream: the trailer's 8, then only zeros. */
  private readonly trailer = Buffer.alloc(8);
  private trailerLength = 0;
  private crc = 0;
  private size = 0;
  private readonly inflated: Promise<void>;
  /**
   * Deflate data received and not handed to the inflater yet, copied into one buffer of
   * `chunkSize` bytes that is handed over when full and reused once the inflater has taken it
   * (a fresh buffer per piece would cost its page faults every time).
   */
  private piece: Buffer | undefined;
  private pieceLength = 0;

  /** @param chunkSize - The size of each output chunk, and the least input handed to the inflater at once. */
  constructor(private readonly chunkSize = 64 * 1024) {
    super();
    this.inflate = zlib.createInflateRaw({ chunkSize });
    this.inflate.on('data', (out: Buffer) => {
      this.crc = crc32(out, this.crc);
      this.size += out.length;
      if (!this.push(out)) this.inflate.pause();
    });
    this.inflated = new Promise((resolve, reject) => {
      this.inflate.once('end', resolve);
      this.inflate.once('error', reject);
    });
    // Settled by _flush, or never needed when this stream is destroyed first.
    this.inflated.catch(() => undefined);
    // On corrupt deflate data zlib destroys itself and never calls back the write in flight
    // (feed's callback): without this, the pipeline would wait forever on a damaged archive.
    // Its error ends this stream too, and the reader reports it as a malformed archive.
    this.inflate.once('error', (error) => this.destroy(error));
  }

  override _read(size: number): void {
    this.inflate.resume();
    super._read(size);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      if (this.state === 'header') {
        this.header = this.header.length === 0 ? chunk : Buffer.concat([this.header, chunk]);
        const length = gzipHeaderLength(this.header);
        if (length === undefined) {
          callback();
          return;
        }
        const rest = this.header.subarray(length);
        this.header = Buffer.alloc(0);
        this.state = 'body';
        this.hold(rest, callback);
        return;
      }
      if (this.state === 'body') {
        this.hold(chunk, callback);
        return;
      }
      this.takeTrailer(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  /**
   * Hands `chunk` on in pieces of `chunkSize` bytes, and acknowledges it once every full piece
   * it completed has been taken; what is left waits in `piece` for the next chunk or the end.
   * A chunk at least `chunkSize` long that starts a piece goes as it is, without a copy.
   */
  private hold(chunk: Buffer, callback: TransformCallback): void {
    let at = 0;
    const fed = (error?: Error | null): void => (error ? callback(error) : next());
    const next = (): void => {
      try {
        while (at < chunk.length) {
          if (this.state !== 'body') {
            // The deflate stream ended in the piece just fed: the rest is its trailer and beyond.
            this.takeTrailer(chunk.subarray(at));
            break;
          }
          if (this.pieceLength === 0 && chunk.length - at >= this.chunkSize) {
            const whole = chunk.subarray(at);
            at = chunk.length;
            this.feed(whole, fed);
            return;
          }
          this.piece ??= Buffer.allocUnsafeSlow(this.chunkSize);
          const copied = chunk.copy(this.piece, this.pieceLength, at);
          this.pieceLength += copied;
          at += copied;
          if (this.pieceLength === this.chunkSize) {
            this.feed(this.takePiece(), fed);
            return;
          }
        }
        callback();
      } catch (error) {
        callback(error as Error);
      }
    };
    next();
  }

  /** The bytes in `piece`, which may be filled again once the inflater has taken them. */
  private takePiece(): Buffer {
    const bytes = (this.piece as Buffer).subarray(0, this.pieceLength);
    this.pieceLength = 0;
    return bytes;
  }

  /**
   * Hands `chunk` to the inflater and acknowledges it once taken. The inflater takes all of
   * it unless the deflate stream ends inside it: then `bytesWritten` (what zlib consumed)
   * falls short of what was fed, and the rest of the chunk is the trailer and beyond. A
   * stream that ends exactly at a chunk's end shows as a next chunk taken not at all.
   */
  private feed(chunk: Buffer, callback: TransformCallback): void {
    this.fed += chunk.length;
    this.inflate.write(chunk, (error) => {
      if (error) return callback(error);
      const left = this.fed - this.inflate.bytesWritten;
      if (left > 0) {
        this.state = 'trailer';
        try {
          this.takeTrailer(chunk.subarray(chunk.length - left));
        } catch (problem) {
          return callback(problem as Error);
        }
      }
      callback();
    });
  }

  /** Keeps the trailer's 8 bytes; refuses anything after them but zeros, as soon as it arrives. */
  private takeTrailer(bytes: Buffer): void {
    const needed = Math.min(8 - this.trailerLength, bytes.length);
    bytes.copy(this.trailer, this.trailerLength, 0, needed);
    this.trailerLength += needed;
    const after = bytes.subarray(needed);
    const nonZero = after.findIndex((byte) => byte !== 0);
    if (nonZero < 0) return;
    if (after[nonZero] === 0x1f && (after.length <= nonZero + 1 || after[nonZero + 1] === 0x8b)) {
      throw new ArchiveError('gzip-member', undefined, 'a second gzip member follows the first; only one is read');
    }
    throw new ArchiveError('trailing-data', undefined, 'bytes other than zeros follow the gzip stream');
  }

  override _flush(callback: TransformCallback): void {
    if (this.state === 'header') {
      callback(
        new ArchiveError(
          'truncated',
          undefined,
          this.header.length === 0 ? 'the gzip stream is empty' : 'the gzip header is cut short',
        ),
      );
      return;
    }
    // What is held goes to the inflater first; it may end the deflate stream.
    if (this.state === 'body' && this.pieceLength > 0) {
      this.feed(this.takePiece(), (error) => (error ? callback(error) : this._flush(callback)));
      return;
    }
    // In the body the deflate stream has not ended yet: finishing makes zlib report a cut
    // stream (Z_BUF_ERROR), or end it when it ends exactly here.
    if (this.state === 'body') this.inflate.end();
    this.inflated.then(
      () => {
        if (this.trailerLength < 8)
          return callback(new ArchiveError('truncated', undefined, 'the gzip stream ends without its trailer'));
        if (this.trailer.readUInt32LE(0) !== this.crc >>> 0)
          return callback(new ArchiveError('malformed', undefined, 'the gzip CRC-32 does not match the inflated data'));
        if (this.trailer.readUInt32LE(4) !== this.size % 2 ** 32)
          return callback(new ArchiveError('malformed', undefined, 'the gzip size does not match the inflated data'));
        callback();
      },
      (error: unknown) => callback(error as Error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.inflate.destroy();
    callback(error);
  }
}

const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
/** A header past this is not a header a writer makes (FEXTRA is at most 64 KiB; names are short). */
const MAX_HEADER = 1024 * 1024;

/** The length of the gzip member header at the start of `bytes`, or undefined when more bytes are needed. */
function gzipHeaderLength(bytes: Buffer): number | undefined {
  if (bytes.length >= 1 && bytes[0] !== 0x1f) throw notGzip();
  if (bytes.length >= 2 && bytes[1] !== 0x8b) throw notGzip();
  if (bytes.length >= 3 && bytes[2] !== 8)
    throw new ArchiveError('malformed', undefined, 'not a valid gzip stream (compression method is not deflate)');
  if (bytes.length < 10) return undefined;
  const flags = bytes[3] as number;
  if ((flags & 0xe0) !== 0)
    throw new ArchiveError('malformed', undefined, 'not a valid gzip stream (reserved header flags set)');
  let at = 10;
  if (flags & FEXTRA) {
    if (bytes.length < at + 2) return undefined;
    at += 2 + bytes.readUInt16LE(at);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const end = bytes.indexOf(0, at);
    if (end < 0) {
      if (bytes.length > MAX_HEADER) throw new ArchiveError('malformed', undefined, 'the gzip header is too long');
      return undefined;
    }
    at = end + 1;
  }
  if (flags & FHCRC) {
    if (bytes.length < at + 2) return undefined;
    if (bytes.readUInt16LE(at) !== (crc32(bytes.subarray(0, at), 0) & 0xffff))
      throw new ArchiveError('malformed', undefined, 'the gzip header checksum does not match');
    at += 2;
  }
  if (at > MAX_HEADER) throw new ArchiveError('malformed', undefined, 'the gzip header is too long');
  return bytes.length >= at ? at : undefined;
}

function notGzip(): ArchiveError {
  return new ArchiveError('malformed', undefined, 'not a valid gzip stream (incorrect header check)');
}

/** zlib's CRC-32 where Node has it (20.15 and later); a table otherwise. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

function crc32(data: Uint8Array, value: number): number {
  if (nativeCrc32 !== undefined) return nativeCrc32(data, value);
  let crc = ~value >>> 0;
  for (const byte of data) crc = ((CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8)) >>> 0;
  return ~crc >>> 0;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();
