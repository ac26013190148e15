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
const SEVENS = '7777777777777777777';
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
  let name = full;
  let prefix = '';
  while (name.length > 100) {
    const slash = name.indexOf('/');
    if (slash === -1) return undefined;
    prefix += prefix ? `/${name.slice(0, slash)}` : name.slice(0, slash);
    name = name.slice(slash + 1);
  }
  if (prefix.length > 155) return undefined;
  return { name, prefix };
}

/** A pax record, `<length> path=<name>\n`, its length counting its own digits. */
function paxPath(name: string): string {
  const body = ` path=${name}\n`;
  const length = Buffer.byteLength(body);
  let digits = Math.floor(Math.log(length) / Math.log(10)) + 1;
  if (length + digits >= 10 ** digits) digits++;
  return `${length + digits}${body}`;
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
  target.fill(0, offset, offset + BLOCK);
  target.write(name, offset, 'latin1');
  target.write(octal(mode & 0o7777, 6), offset + 100, 'latin1');
  target.write(octal(0, 6), offset + 108, 'latin1'); // uid
  target.write(octal(0, 6), offset + 116, 'latin1'); // gid
  writeSize(target, offset + 124, size);
  target.write(octal(0, 11), offset + 136, 'latin1'); // mtime
  target[offset + 156] = typeflag;
  target.write('ustar\u000000', offset + 257, 'latin1'); // magic "ustar\0", version "00"
  target.write(octal(0, 6), offset + 329, 'latin1'); // devmajor
  target.write(octal(0, 6), offset + 337, 'latin1'); // devminor
  if (prefix) target.write(prefix, offset + 345, 'latin1');
  let sum = 8 * 0x20; // the checksum field counts as eight spaces
  for (let i = offset; i < offset + 148; i++) sum += target[i]!;
  for (let i = offset + 156; i < offset + BLOCK; i++) sum += target[i]!;
  target.write(octal(sum, 6), offset + 148, 'latin1');
}

/** `n` octal digits and a space (all sevens when it does not fit), as tar-stream writes numbers. */
function octal(value: number, n: number): string {
  const digits = value.toString(8);
  if (digits.length > n) return `${SEVENS.slice(0, n)} `;
  return `${digits.padStart(n, '0')} `;
}

/** 11 octal digits, or base-256 for a size of 8 GiB and more. */
function writeSize(target: Buffer, offset: number, size: number): void {
  if (size.toString(8).length <= 11) {
    target.write(octal(size, 11), offset, 'latin1');
    return;
  }
  target[offset] = 0x80;
  let rest = size;
  for (let i = 11; i > 0; i--) {
    target[offset + i] = rest & 0xff;
    rest = Math.floor(rest / 0x100);
  }
}

function roundUp512(n: number): number {
  return Math.ceil(n / BLOCK) * BLOCK;
}
