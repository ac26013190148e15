// A .zip upload read into a package tree. fflate inflates; the central directory is read here,
// because fflate's readers drop what a package needs of it: the Unix mode (links, executables).
import type { PackageTreeEntry } from '../read/tree.js';
import type { PackageUpload } from '../validate/core.js';
import { inflateEntry } from './inflate.js';
import { type UploadLimits, UploadRefused, UploadTree, refuse, refusedUpload } from './tree-builder.js';

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const MADE_ON_UNIX = 3;

const utf8 = new TextDecoder('utf-8', { fatal: true });

interface CentralEntry {
  name: string;
  flags: number;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** st_mode when the archive was made on Unix, else undefined. */
  unixMode: number | undefined;
}

/**
 * Reads a .zip upload into a package tree, bounded by `limits` (UploadLimits): the entry
 * count is checked from the central directory before anything is inflated, every name is
 * checked as a package path, and bytes are counted as they inflate. Stored and deflated
 * entries are read; a Unix mode in the archive gives links and executable bits (a zip made
 * elsewhere holds files at 0o644). A single top folder wrapping the package is dropped.
 * Never throws on a bad upload: a refusal is a finding (upload.*) and `refused`.
 *
 * @example
 * const upload = readZip(new Uint8Array(await file.arrayBuffer()));
 * const verdict = await validatePlugin(upload);
 */
export function readZip(bytes: Uint8Array, limits: UploadLimits = {}): PackageUpload {
  const tree = new UploadTree(limits, bytes.length);
  try {
    for (const entry of centralDirectory(bytes, tree)) addEntry(bytes, entry, tree);
    return tree.finish();
  } catch (error) {
    if (error instanceof UploadRefused) return refusedUpload(error.finding);
    throw error;
  }
}

function addEntry(bytes: Uint8Array, entry: CentralEntry, tree: UploadTree): void {
  const path = tree.pathOf(entry.name);
  const type = entry.unixMode === undefined ? 0 : entry.unixMode & S_IFMT;
  if (type === S_IFDIR || (type === 0 && entry.name.endsWith('/'))) {
    tree.add(path, { type: 'directory' }, entry.name);
    return;
  }
  if ((entry.flags & 1) !== 0)
    throw refuse('upload.entry-unsupported', path, 'is encrypted: a package is read as it is, never decrypted');
  if (entry.method !== 0 && entry.method !== 8)
    throw refuse(
      'upload.entry-unsupported',
      path,
      `uses compression method ${entry.method}: only stored and deflate are read`,
    );
  if (type !== 0 && type !== S_IFREG && type !== S_IFLNK)
    throw refuse('upload.entry-unsupported', path, 'is a pipe, socket or device, which a zip does not carry');
  const mode = entry.unixMode === undefined ? 0o644 : entry.unixMode & 0o7777;
  // A file over the per-file limit is kept unread, so the reader refuses it as on a disk.
  if (type !== S_IFLNK && entry.size > tree.limits.maxFileBytes) {
    tree.add(path, { type: 'file', bytes: new Uint8Array(0), mode, size: entry.size }, entry.name);
    return;
  }
  const data = entryData(bytes, entry, tree, path);
  let added: PackageTreeEntry;
  if (type === S_IFLNK) {
    let target: string;
    try {
      target = utf8.decode(data);
    } catch {
      throw refuse('upload.malformed', path, 'is a link whose target is not UTF-8');
    }
    added = { type: 'symlink', target };
  } else added = { type: 'file', bytes: data, mode };
  tree.add(path, added, entry.name);
}

/** An entry's bytes: stored, or inflated to exactly its declared size. */
function entryData(bytes: Uint8Array, entry: CentralEntry, tree: UploadTree, path: string): Uint8Array {
  const view = viewOf(bytes);
  const at = entry.localOffset;
  if (at + 30 > bytes.length || view.getUint32(at, true) !== LOCAL)
    throw refuse('upload.malformed', path, 'has no local header where the central directory says');
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  const end = start + entry.compressedSize;
  if (end > bytes.length) throw refuse('upload.malformed', path, 'ends past the end of the archive');
  const data = bytes.subarray(start, end);
  if (entry.method === 0) {
    if (entry.compressedSize !== entry.size)
      throw refuse('upload.malformed', path, 'is stored, but its sizes disagree');
    tree.unpack(data.length);
    return data.slice();
  }
  return inflateEntry(data, entry.size, tree, path);
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The central directory's entries, each counted against the entry limit as it is listed. */
function* centralDirectory(bytes: Uint8Array, tree: UploadTree): Generator<CentralEntry> {
  const view = viewOf(bytes);
  // The end record is in the last 22 + 65,535 bytes (its comment is at most that long).
  let eocd = -1;
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at -= 1) {
    if (view.getUint32(at, true) === EOCD) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw refuse('upload.malformed', '', 'is not a zip archive: it has no end of central directory');
  let count = view.getUint16(eocd + 10, true);
  let offset = view.getUint32(eocd + 16, true);
  if (count === 0xffff || offset === 0xffffffff) {
    const locator = eocd - 20;
    if (locator < 0 || view.getUint32(locator, true) !== ZIP64_LOCATOR)
      throw refuse('upload.malformed', '', 'is a zip64 archive without its zip64 locator');
    const record = Number(view.getBigUint64(locator + 8, true));
    if (record + 56 > bytes.length || view.getUint32(record, true) !== ZIP64_EOCD)
      throw refuse('upload.malformed', '', 'is a zip64 archive without its zip64 end record');
    count = Number(view.getBigUint64(record + 32, true));
    offset = Number(view.getBigUint64(record + 48, true));
  }
  if (count > tree.limits.maxEntries)
    throw refuse('upload.too-many-entries', '', `holds more than ${tree.limits.maxEntries} entries`);
  let at = offset;
  for (let i = 0; i < count; i += 1) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL)
      throw refuse('upload.malformed', '', 'has a damaged central directory');
    tree.countEntry();
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const next = at + 46 + nameLength + extraLength + commentLength;
    if (next > bytes.length) throw refuse('upload.malformed', '', 'has a damaged central directory');
    if (nameLength > tree.limits.maxPathBytes)
      throw refuse('upload.path-too-long', '', `has an entry name longer than ${tree.limits.maxPathBytes} bytes`);
    let name: string;
    try {
      name = utf8.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    } catch {
      throw refuse('upload.path-invalid', '', 'has an entry name that is not UTF-8');
    }
    const madeBy = view.getUint16(at + 4, true) >> 8;
    const sizes = {
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      localOffset: view.getUint32(at + 42, true),
    };
    zip64Sizes(view, at + 46 + nameLength, extraLength, sizes);
    yield {
      name,
      flags: view.getUint16(at + 8, true),
      method: view.getUint16(at + 10, true),
      ...sizes,
      unixMode: madeBy === MADE_ON_UNIX ? view.getUint32(at + 38, true) >>> 16 : undefined,
    };
    at = next;
  }
}

/** The zip64 extra field's sizes and offset, in its order, for each field the entry marks as in it. */
function zip64Sizes(
  view: DataView,
  extra: number,
  length: number,
  sizes: { compressedSize: number; size: number; localOffset: number },
): void {
  for (let at = extra; at + 4 <= extra + length; ) {
    const id = view.getUint16(at, true);
    const size = view.getUint16(at + 2, true);
    if (id === 0x0001) {
      let field = at + 4;
      const take = (): number => {
        if (field + 8 > at + 4 + size) throw refuse('upload.malformed', '', 'has a damaged zip64 field');
        const value = Number(view.getBigUint64(field, true));
        field += 8;
        return value;
      };
      if (sizes.size === 0xffffffff) sizes.size = take();
      if (sizes.compressedSize === 0xffffffff) sizes.compressedSize = take();
      if (sizes.localOffset === 0xffffffff) sizes.localOffset = take();
      return;
    }
    at += 4 + size;
  }
}
