import { open } from 'node:fs/promises';
import { type DocumentFormat, DocumentTooLargeError } from './errors.js';

/**
 * The bytes of a document file, read through one descriptor and never more than `maxBytes`
 * of them: a file over the limit (or growing past it while read) is DocumentTooLargeError,
 * before its bytes are held in memory. Errors of the file system pass through (ENOENT, ...).
 */
export async function readBoundedFile(path: string, maxBytes: number, format: DocumentFormat): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw new DocumentTooLargeError(path, format, maxBytes, size);
    // Sized to the file plus one byte, which tells its end; grown (never past one byte more
    // than allowed, which tells a file that grew past the limit) only if it grows meanwhile.
    let buffer = Buffer.allocUnsafe(size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(maxBytes + 1, buffer.length * 2));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw new DocumentTooLargeError(path, format, maxBytes, undefined);
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}
