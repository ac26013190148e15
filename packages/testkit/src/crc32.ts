import * as zlib from 'node:zlib';

/**
 * CRC-32 (the zlib/PNG polynomial), as pack indexes store per object. Uses zlib.crc32
 * where Node has it (20.15+, 22.2+); older Node 20 releases get the table version.
 */
export function crc32(data: Uint8Array, previous = 0): number {
  const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  return native ? native(data, previous) : tableCrc32(data, previous);
}

let table: Uint32Array | undefined;

function tableCrc32(data: Uint8Array, previous: number): number {
  table ??= makeTable();
  let crc = (previous ^ 0xffffffff) >>> 0;
  for (const byte of data) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function makeTable(): Uint32Array {
  const result = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    result[n] = c >>> 0;
  }
  return result;
}
