// A .tar.gz upload read into a package tree: fflate gunzips (bounded), modern-tar parses the
// tar (ustar, pax and GNU long names), and every entry is checked here as it is added.
import { unpackTar } from 'modern-tar';
import type { PackageUpload } from '../validate/core.js';
import { gunzipUpload } from './inflate.js';
import { type UploadLimits, UploadRefused, UploadTree, refuse, refusedUpload } from './tree-builder.js';

const SPECIAL = {
  fifo: 'fifo',
  'character-device': 'character-device',
  'block-device': 'block-device',
} as const;

/**
 * Reads a .tar.gz upload (one gzip member holding a tar) into a package tree, bounded by
 * `limits` (UploadLimits): bytes are counted as they inflate, so a bomb stops at the package
 * limit or the compression ratio; every name is checked as a package path. Links and pipes
 * are kept, to be judged as a folder's are; a hard link reads as a copy of the regular file
 * it names earlier in the archive. A single top folder wrapping the package is dropped.
 * Never throws on a bad upload: a refusal is a finding (upload.*) and `refused`.
 *
 * @example
 * const upload = await readTarGz(new Uint8Array(await file.arrayBuffer()));
 * const verdict = await validatePlugin(upload);
 */
export async function readTarGz(bytes: Uint8Array, limits: UploadLimits = {}): Promise<PackageUpload> {
  const tree = new UploadTree(limits, bytes.length);
  try {
    const tar = gunzipUpload(bytes, tree);
    // Headers are counted before modern-tar parses anything: an entry has at most three (a pax
    // header, a GNU long name and long link name, itself), so past three times the entry limit
    // the upload is refused without an object made for any of them.
    const end = endOfArchive(tar, 3 * tree.limits.maxEntries);
    if (end === undefined) throw refuse('upload.malformed', '', 'holds a tar without its end-of-archive marker');
    // What a lenient extractor would still find after the marker is not in the upload's verdict
    // either: anything but zeros there refuses the upload, as the safe tar reader refuses it.
    if (tar.subarray(end).some((byte) => byte !== 0))
      throw refuse('upload.malformed', '', 'holds data after its end-of-archive marker');
    let entries: Awaited<ReturnType<typeof unpackTar>>;
    try {
      entries = await unpackTar(tar, { strict: true });
    } catch (error) {
      throw refuse(
        'upload.malformed',
        '',
        `holds no readable tar (${error instanceof Error ? error.message : 'damaged'})`,
      );
    }
    for (const { header, data } of entries) {
      tree.countEntry();
      const path = tree.pathOf(header.name);
      const type = header.type ?? 'file';
      if (type === 'directory') tree.add(path, { type: 'directory' }, header.name);
      else if (type === 'symlink') tree.add(path, { type: 'symlink', target: header.linkname ?? '' }, header.name);
      else if (type === 'link') {
        const target = tree.pathOf(header.linkname ?? '');
        const earlier = tree.get(target);
        if (earlier?.type !== 'file')
          throw refuse('upload.hard-link', path, 'is a hard link to no regular file earlier in the archive');
        tree.add(path, earlier, header.name);
      } else if (type in SPECIAL)
        tree.add(path, { type: 'special', kind: SPECIAL[type as keyof typeof SPECIAL] }, header.name);
      else if (type === 'file') {
        const mode = (header.mode ?? 0o644) & 0o7777;
        const size = data?.length ?? 0;
        if (size > tree.limits.maxFileBytes)
          tree.add(path, { type: 'file', bytes: new Uint8Array(0), mode, size }, header.name);
        else tree.add(path, { type: 'file', bytes: data ?? new Uint8Array(0), mode }, header.name);
      } else
        throw refuse('upload.entry-unsupported', path, `is a tar entry of type ${type}, which a package cannot hold`);
    }
    return tree.finish();
  } catch (error) {
    if (error instanceof UploadRefused) return refusedUpload(error.finding);
    throw error;
  }
}

/**
 * The offset just past the tar's end-of-archive marker (two zero blocks; one at the very end
 * of the data is taken too, as GNU tar takes it), found by walking the headers' sizes; undefined
 * when the walk runs off the end first. Refuses the upload past `maxHeaders` headers.
 * modern-tar parses the entries; this only finds the end and counts.
 */
function endOfArchive(tar: Uint8Array, maxHeaders: number): number | undefined {
  let at = 0;
  let headers = 0;
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) {
      const next = tar.subarray(at + 512, at + 1024);
      return next.every((byte) => byte === 0) ? Math.min(tar.length, at + 1024) : undefined;
    }
    headers += 1;
    if (headers > maxHeaders)
      throw refuse(
        'upload.too-many-entries',
        '',
        `holds more than ${maxHeaders} tar headers (entries, pax and long-name headers)`,
      );
    const size = headerSize(header);
    if (size === undefined) return undefined;
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}

/** The size field of a tar header: octal text, or base-256 when its first byte has the high bit. */
function headerSize(header: Uint8Array): number | undefined {
  const field = header.subarray(124, 136);
  if (((field[0] as number) & 0x80) !== 0) {
    let value = 0;
    for (let i = 1; i < field.length; i += 1) value = value * 256 + (field[i] as number);
    return Number.isSafeInteger(value) ? value : undefined;
  }
  const text = new TextDecoder()
    .decode(field)
    .replace(/[\0 ]+$/, '')
    .trim();
  return /^[0-7]*$/.test(text) ? Number.parseInt(text || '0', 8) : undefined;
}
