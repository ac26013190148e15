const encoder = new TextEncoder();

/** Byte order of two byte strings (what Buffer.compare gives), with web-standard JavaScript only. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const shorter = Math.min(a.length, b.length);
  for (let at = 0; at < shorter; at += 1) {
    const x = a[at] as number;
    const y = b[at] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return Math.sign(a.length - b.length);
}

/**
 * Byte order of UTF-8 strings, which is code-point order: the same in every locale and
 * runtime (localeCompare is not, and `<` on UTF-16 code units differs above U+FFFF). Every
 * sorted thing this package writes or reports uses it.
 */
export function byteOrder(a: string, b: string): number {
  // Without surrogates, UTF-16 code units are in code-point order, so the first one that
  // differs decides, with nothing encoded. A surrogate where they part (a character above
  // U+FFFF, or a lone one, which UTF-8 spells as U+FFFD) is left to the encoded bytes.
  const shorter = Math.min(a.length, b.length);
  let at = 0;
  while (at < shorter && a.charCodeAt(at) === b.charCodeAt(at)) at += 1;
  const x = a.charCodeAt(at);
  const y = b.charCodeAt(at);
  const surrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdfff;
  if (surrogate(x) || surrogate(y) || (at > 0 && surrogate(a.charCodeAt(at - 1))))
    return compareBytes(encoder.encode(a), encoder.encode(b));
  if (at === shorter) return Math.sign(a.length - b.length);
  return x < y ? -1 : 1;
}

/** The bytes without a leading UTF-8 byte order mark, for readers that drop one (package.json, as npm does). */
export function withoutBom(bytes: Uint8Array): Uint8Array {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}
