import { createHash, type Hash } from 'node:crypto';
import { chmod, mkdir, open, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { constants, deflateSync } from 'node:zlib';
import { crc32 } from './crc32.js';

/**
 * Stores blobs in `gitDir` as one pack and returns their SHAs, in input order.
 *
 * Why not let fast-import store them: for a 10,000-file tree of random bytes (330 MB)
 * fast-import takes ~25 s here, single-threaded in zlib and in git's collision-detecting
 * SHA-1, and `git index-pack` on a pack we write still takes ~5.5 s re-hashing it. Here
 * Node hashes with OpenSSL, deflates each blob at git's default level except blobs that
 * cannot compress (stored as-is, which is what zlib's output for them amounts to anyway),
 * and writes the pack and its v2 index itself: ~2 s for 330 MB. The tests run `git fsck`
 * on what this writes.
 */
export async function storeBlobs(gitDir: string, blobs: readonly Uint8Array[]): Promise<string[]> {
  const shas = blobs.map(blobSha);
  const unique = new Map<string, Uint8Array>();
  for (const [index, blob] of blobs.entries()) unique.set(shas[index]!, blob);
  if (unique.size > 0) await writePack(gitDir, unique.entries(), unique.size);
  return shas;
}

/** The object id git gives a blob: SHA-1 of `blob <size>\0<bytes>`. */
function blobSha(blob: Uint8Array): string {
  return createHash('sha1').update(`blob ${blob.length}\0`).update(blob).digest('hex');
}

async function writePack(
  gitDir: string,
  blobs: Iterable<[sha: string, blob: Uint8Array]>,
  count: number,
): Promise<void> {
  const packDir = join(gitDir, 'objects', 'pack');
  await mkdir(packDir, { recursive: true });
  const tmpPack = join(packDir, `tmp_pack_testkit_${process.pid}_${Date.now()}`);
  const entries: PackEntry[] = [];
  const checksum = createHash('sha1');
  const file = await open(tmpPack, 'w');
  try {
    const out = bufferedWriter(file, checksum);
    // Pack v2: "PACK", version, object count, the objects, then SHA-1 of everything before.
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(count, 8);
    await out.write(header);
    for (const [sha, blob] of blobs) {
      const head = objectHeader(BLOB_TYPE, blob.length);
      const body = deflateSync(blob, { level: compressionLevel(blob) });
      entries.push({ sha, offset: out.offset, crc: crc32(body, crc32(head)) });
      await out.write(head);
      await out.write(body);
    }
    await out.flush();
    const packSum = checksum.digest();
    await file.write(packSum);
    await file.sync();
    await file.close();
    // Readers look for the .idx: the pack must be in place before its index appears.
    const base = join(packDir, `pack-${packSum.toString('hex')}`);
    await rename(tmpPack, `${base}.pack`);
    await chmod(`${base}.pack`, 0o444);
    await writeFile(`${base}.idx.tmp`, packIndex(entries, packSum), { mode: 0o444 });
    await rename(`${base}.idx.tmp`, `${base}.idx`);
  } catch (error) {
    await file.close().catch(() => {});
    await rm(tmpPack, { force: true });
    throw error;
  }
}

interface PackEntry {
  sha: string;
  offset: number;
  crc: number;
}

/** Collects small writes into 1 MiB chunks, hashing them and tracking the pack offset. */
function bufferedWriter(file: FileHandle, checksum: Hash) {
  let pieces: Uint8Array[] = [];
  let pending = 0;
  let written = 0;
  const flush = async () => {
    if (pending === 0) return;
    const chunk = Buffer.concat(pieces, pending);
    pieces = [];
    pending = 0;
    checksum.update(chunk);
    await file.write(chunk);
  };
  return {
    get offset() {
      return written;
    },
    async write(bytes: Uint8Array) {
      pieces.push(bytes);
      pending += bytes.length;
      written += bytes.length;
      if (pending >= 1 << 20) await flush();
    },
    flush,
  };
}

const LARGE_OFFSET = 0x80000000;

/**
 * Pack index v2: magic, version, 256-entry fan-out of cumulative counts by first byte,
 * sorted ids, CRC-32 of each packed object, 31-bit offsets (or an index into the 64-bit
 * offset table), the pack's checksum, and the SHA-1 of the index itself.
 */
function packIndex(entries: PackEntry[], packSum: Buffer): Buffer {
  const sorted = [...entries].sort((a, b) => (a.sha < b.sha ? -1 : a.sha > b.sha ? 1 : 0));
  const n = sorted.length;
  const large = sorted.filter((entry) => entry.offset >= LARGE_OFFSET);
  const index = Buffer.alloc(8 + 256 * 4 + n * 28 + large.length * 8 + 40);
  index.writeUInt32BE(0xff744f63, 0);
  index.writeUInt32BE(2, 4);
  const fanout = new Uint32Array(256);
  for (const entry of sorted) fanout[parseInt(entry.sha.slice(0, 2), 16)]! += 1;
  let cumulative = 0;
  for (let byte = 0; byte < 256; byte += 1) {
    cumulative += fanout[byte]!;
    index.writeUInt32BE(cumulative, 8 + byte * 4);
  }
  const names = 8 + 256 * 4;
  const crcs = names + n * 20;
  const offsets = crcs + n * 4;
  const largeOffsets = offsets + n * 4;
  let largeCount = 0;
  sorted.forEach((entry, i) => {
    index.write(entry.sha, names + i * 20, 'hex');
    index.writeUInt32BE(entry.crc >>> 0, crcs + i * 4);
    if (entry.offset < LARGE_OFFSET) {
      index.writeUInt32BE(entry.offset, offsets + i * 4);
    } else {
      index.writeUInt32BE((LARGE_OFFSET | largeCount) >>> 0, offsets + i * 4);
      index.writeBigUInt64BE(BigInt(entry.offset), largeOffsets + largeCount * 8);
      largeCount += 1;
    }
  });
  const trailer = largeOffsets + large.length * 8;
  packSum.copy(index, trailer);
  createHash('sha1')
    .update(index.subarray(0, trailer + 20))
    .digest()
    .copy(index, trailer + 20);
  return index;
}

const BLOB_TYPE = 3;

/** Type and size as packs encode them: 3 type bits and 4 size bits, then 7 size bits per byte. */
function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

const SAMPLE_BYTES = 4096;
/** Random bytes measure ~7.95 bits/byte over a 4 KiB sample; text is 4–6. */
const INCOMPRESSIBLE_BITS_PER_BYTE = 7.5;

/**
 * Level 0 (stored) for blobs whose first 4 KiB look random, git's default otherwise.
 * Deflating random bytes costs ~30 MB/s here and saves nothing.
 */
function compressionLevel(blob: Uint8Array): number {
  if (blob.length < 1024) return constants.Z_DEFAULT_COMPRESSION;
  const sample = blob.subarray(0, SAMPLE_BYTES);
  const counts = new Uint32Array(256);
  for (const byte of sample) counts[byte]! += 1;
  let bits = 0;
  for (const count of counts) {
    if (count === 0) continue;
    const p = count / sample.length;
    bits -= p * Math.log2(p);
  }
  return bits > INCOMPRESSIBLE_BITS_PER_BYTE ? constants.Z_NO_COMPRESSION : constants.Z_DEFAULT_COMPRESSION;
}
