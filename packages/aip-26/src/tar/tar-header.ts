/**
 * The header blocks of one bundle entry, encoded straight into the archive's buffer: the
 * bytes tar-stream 3's `pack` writes for the same header (POSIX ustar; a pax `path` record
 * under a `PaxHeader` entry when the name does not fit ustar or is not ASCII), which is what
 * bundles were written with before (test/tar-header.test.ts compares the two). Written here
 * because the stream of three chunks per file that `pack` gives cost more than the
 * compression on a 10,000-file bundle.
 *
 * Pinned fields: mtime 0, uid and gid 0, empty uname and gname, device numbers 0.
 */

const BLOCK = 512;
const ZERO = 0x30;
const TYPE_FILE = ZERO; // '0'
const TYPE_DIRECTORY = ZERO + 5; // '5'
const TYPE_PAX = 0x78; // 'x'

/** Bytes the headers of an entry named `name` take: 512, or 1536 + the padded pax record. */
export function headerBytes(name: string): number {
  const split = ustarSplit(name);
  if (split) return BLOCK;
  return 2 * BLOCK + roundUp512(Buffer.byteLength(paxPath(name)));
}

/**
 * Writes the header block(s) of an entry at `offset` of `target` (which must have
 * `headerBytes(name)` bytes there, zero-filled or not: every byte is written). Returns the
 * offset after them.
 */
export function writeHeader(
  target: Buffer,
  offset: number,
  name: string,
  type: 'file' | 'directory',
  mode: number,
  size: number,
): number {
  const split = ustarSplit(name);
  const typeflag = type === 'directory' ? TYPE_DIRECTORY : TYPE_FILE;
  if (split) {
    writeBlock(target, offset, split.name, split.prefix, typeflag, mode, size);
    return offset + BLOCK;
  }
  const record = paxPath(name);
  const recordBytes = Buffer.byteLength(record);
  let at = offset;
  writeBlock(target, at, 'PaxHeader', '', TYPE_PAX, mode, recordBytes);
  at += BLOCK;
  const padded = roundUp512(recordBytes);
  target.fill(0, at, at + padded);
  target.write(record, at, 'utf8');
  at += padded;
  writeBlock(target, at, 'PaxHeader', '', typeflag, mode, size);
  return at + BLOCK;
}

/** tar-stream's ustar split: the name, and a prefix of its leading folders; undefined when it does not fit or is not ASCII. */
function ustarSplit(full: string): { name: string; prefix: string } | undefined {
  if (Buffer.byteLength(full) !== full.length) return undefined;
  if (full.length <= 100) return { name: full, prefix: '' };
  // tar-stream moves leading folders into the prefix one at a time until the name fits: the
  // cut is at the first "/" with at most 100 characters after it.
  let slash = full.indexOf('/');
  while (slash !== -1 && full.length - slash - 1 > 100) slash = full.indexOf('/', slash + 1);
  if (slash === -1 || slash > 155) return undefined;
  return { name: full.slice(slash + 1), prefix: full.slice(0, slash) };
}

/** A pax record, `<length> path=<name>\n`, its length counting its own digits. */
function paxPath(name: string): string {
  const body = ` path=${name}\n`;
  const length = Buffer.byteLength(body);
  let digits = Math.floor(Math.log(length) / Math.log(10)) + 1;
  if (length + digits >= 10 ** digits) digits++;
  return `${length + digits}${body}`;
}

/**
 * The bytes every header block of one type and mode shares: mode, uid, gid, mtime, typeflag,
 * magic, version and device numbers, encoded once, with the checksum of those bytes (the
 * checksum field counted as eight spaces, the name, prefix and size as zeros). A header is
 * then one copy of its template, its name, prefix and size written over it, and the
 * checksum of only what was written: measured on 2,000 files in the CLI (no optimizing
 * compiler there), ten `Buffer.write` calls and a 500-byte checksum loop per header took
 * ~110 ms of the main thread. At most one template per type and mode (3 x 4,096).
 */
const templates = new Map<number, { block: Buffer; sum: number }>();

function template(typeflag: number, mode: number): { block: Buffer; sum: number } {
  const key = typeflag * 0o10000 + mode;
  let found = templates.get(key);
  if (!found) {
    const block = Buffer.alloc(BLOCK);
    writeOctal(block, 100, mode, 6);
    writeOctal(block, 108, 0, 6); // uid
    writeOctal(block, 116, 0, 6); // gid
    writeOctal(block, 136, 0, 11); // mtime
    block[156] = typeflag;
    block.write('ustar\u000000', 257, 'latin1'); // magic "ustar\0", version "00"
    writeOctal(block, 329, 0, 6); // devmajor
    writeOctal(block, 337, 0, 6); // devminor
    let sum = 8 * 0x20; // the checksum field counts as eight spaces
    for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += block[i]!;
    found = { block, sum };
    templates.set(key, found);
  }
  return found;
}

function writeBlock(
  target: Buffer,
  offset: number,
  name: string,
  prefix: string,
  typeflag: number,
  mode: number,
  size: number,
): void {
  const { block, sum: fixed } = template(typeflag, mode & 0o7777);
  target.set(block, offset);
  let sum = fixed + writeAscii(target, offset, name);
  if (prefix) sum += writeAscii(target, offset + 345, prefix);
  sum += writeSize(target, offset + 124, size);
  writeOctal(target, offset + 148, sum, 6);
}

/** Writes an ASCII (or latin1) string's characters as bytes; returns their sum. */
function writeAscii(target: Buffer, offset: number, text: string): number {
  let sum = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i) & 0xff;
    target[offset + i] = code;
    sum += code;
  }
  return sum;
}

/**
 * `n` octal digits of `value` (which fits them) and a space, as tar-stream writes numbers;
 * returns the sum of the bytes written.
 */
function writeOctal(target: Buffer, offset: number, value: number, n: number): number {
  let rest = value;
  let sum = 0x20;
  for (let i = n - 1; i >= 0; i--) {
    const digit = ZERO + (rest % 8);
    target[offset + i] = digit;
    sum += digit;
    rest = Math.floor(rest / 8);
  }
  target[offset + n] = 0x20;
  return sum;
}

/** 11 octal digits, or base-256 for a size of 8 GiB and more; returns the sum of the bytes written. */
function writeSize(target: Buffer, offset: number, size: number): number {
  if (size < 8 ** 11) return writeOctal(target, offset, size, 11);
  let sum = 0x80;
  target[offset] = 0x80;
  let rest = size;
  for (let i = 11; i > 0; i--) {
    target[offset + i] = rest & 0xff;
    sum += rest & 0xff;
    rest = Math.floor(rest / 0x100);
  }
  return sum;
}

function roundUp512(n: number): number {
  return Math.ceil(n / BLOCK) * BLOCK;
}
