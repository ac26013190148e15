import { inflateSync } from 'node:zlib';

/** What a pack's objects inflate to, or the first rule one of them breaks. */
export type PackProblem =
  | { kind: 'object'; size: number }
  | { kind: 'total'; size: number }
  | { kind: 'malformed'; reason: string };

const OFS_DELTA = 6;
const REF_DELTA = 7;

/**
 * Checks what a pack inflates to before isomorphic-git indexes it (which inflates every
 * object whole, in memory). A pack is compressed: a few MiB can inflate to many GiB (a blob
 * of zeros, a delta copying one block again and again), so a cap on the pack's own bytes
 * does not bound memory. Each object's size is in its header (for a delta, the size of its
 * result is the second number of the delta itself); every object must be at most
 * `maxObject` bytes and all of them together at most `maxTotal`. Each object is inflated
 * once here, bounded by the size it declares, to find where the next one starts.
 */
export function packProblem(pack: Uint8Array, maxObject: number, maxTotal: number): PackProblem | undefined {
  const buffer = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength);
  if (buffer.length < 32 || buffer.toString('latin1', 0, 4) !== 'PACK')
    return { kind: 'malformed', reason: 'no pack header' };
  const count = buffer.readUInt32BE(8);
  let at = 12;
  let total = 0;
  const end = buffer.length - 20; // the trailing checksum
  for (let index = 0; index < count; index += 1) {
    if (at >= end) return { kind: 'malformed', reason: 'truncated' };
    let byte = buffer[at++] as number;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    let scale = 16;
    while (byte & 0x80) {
      if (at >= end || scale > 2 ** 53) return { kind: 'malformed', reason: 'bad object header' };
      byte = buffer[at++] as number;
      size += (byte & 0x7f) * scale;
      scale *= 128;
    }
    if (type === OFS_DELTA) {
      do {
        if (at >= end) return { kind: 'malformed', reason: 'bad delta offset' };
        byte = buffer[at++] as number;
      } while (byte & 0x80);
    } else if (type === REF_DELTA) {
      at += 20;
    }
    if (size > maxObject) return { kind: 'object', size };
    let data: Buffer;
    let consumed: number;
    try {
      // An object that inflates past the size it declares is refused here, not allocated.
      const { buffer: inflated, engine } = inflateSync(buffer.subarray(at, end), {
        info: true,
        maxOutputLength: Math.max(1, size),
      }) as unknown as {
        buffer: Buffer;
        engine: { bytesWritten: number };
      };
      data = inflated;
      consumed = engine.bytesWritten;
    } catch {
      return { kind: 'malformed', reason: `object ${index} does not inflate to its declared size` };
    }
    let result = size;
    if (type === OFS_DELTA || type === REF_DELTA) {
      // A delta starts with two sizes (base, result), each a little-endian base-128 number.
      let offset = 0;
      const varint = (): number => {
        let value = 0;
        let shift = 1;
        let next: number;
        do {
          next = data[offset++] ?? 0;
          value += (next & 0x7f) * shift;
          shift *= 128;
        } while (next & 0x80 && offset < data.length);
        return value;
      };
      varint();
      result = varint();
      if (result > maxObject) return { kind: 'object', size: result };
    }
    total += result;
    if (total > maxTotal) return { kind: 'total', size: total };
    at += consumed;
  }
  return undefined;
}
