/**
 * Byte order of UTF-8 strings, which is code-point order: the same in every locale and
 * runtime (localeCompare is not, and `<` on UTF-16 code units differs above U+FFFF). Every
 * sorted thing this package writes or reports uses it.
 */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The bytes without a leading UTF-8 byte order mark, for readers that drop one (package.json, as npm does). */
export function withoutBom(bytes: Uint8Array): Uint8Array {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}
