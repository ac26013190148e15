import { type DocumentFormat, DocumentSyntaxError, DocumentTooLargeError } from './errors.js';

/**
 * The text of a document, refused when over `maxBytes` (counted in UTF-8 bytes, before any
 * decoding or parsing) or, for bytes, when not UTF-8. A byte order mark is kept: each format
 * has its own rule for it.
 */
export function boundedText(
  input: string | Uint8Array,
  source: string,
  format: DocumentFormat,
  maxBytes: number,
): string {
  if (typeof input === 'string') {
    // A UTF-16 unit is at least one UTF-8 byte: past maxBytes units the text is too large
    // without counting; below maxBytes / 3 it cannot be.
    if (input.length > maxBytes) throw new DocumentTooLargeError(source, format, maxBytes, undefined);
    if (input.length * 3 > maxBytes) {
      const size = utf8Length(input);
      if (size > maxBytes) throw new DocumentTooLargeError(source, format, maxBytes, size);
    }
    return input;
  }
  if (input.byteLength > maxBytes) throw new DocumentTooLargeError(source, format, maxBytes, input.byteLength);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(input);
  } catch (error) {
    throw new DocumentSyntaxError(source, format, 'NOT_UTF8', undefined, undefined, { cause: error });
  }
}

/**
 * UTF-8 bytes of a string, counted without encoding it: what Buffer.byteLength gives, with
 * web-standard JavaScript only. A lone surrogate counts 3 bytes (it encodes as U+FFFD).
 */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let at = 0; at < text.length; at += 1) {
    const unit = text.charCodeAt(at);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length) {
      const next = text.charCodeAt(at + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        at += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
