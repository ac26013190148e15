import type { FindingCodeInfo } from '../findings.js';

const REFUSED =
  'The upload is refused as a whole: nothing of it is read, as the safe tar reader refuses such an archive.';

/**
 * The finding codes of reading an upload (a folder picked in a browser, a .zip, a .tar.gz, or
 * a host's in-memory tree) into a package before it is validated: what a folder on a disk
 * cannot hold, and what makes an archive too big to unpack. Each rejects the plugin (AR9O5).
 * Links, `.git` entries, pipes and files over the per-file limit are not among them: they
 * are kept in the tree and judged as a folder's are (read.*), so an upload and the folder it
 * was made from get the same findings.
 */
export const UPLOAD_FINDING_CODES = Object.freeze({
  'upload.path-invalid': {
    rule: 'AR9O5',
    severity: 'error',
    text: `An entry's name is not a package path: it is empty, absolute, or holds "..", a backslash, NUL or a drive letter (§4.1). ${REFUSED}`,
  },
  'upload.path-too-long': {
    rule: 'AR9O5',
    severity: 'error',
    text: `An entry's name is longer than the limit (4,096 bytes unless configured). ${REFUSED}`,
  },
  'upload.duplicate': {
    rule: 'AR9O5',
    severity: 'error',
    text: `Two entries name the same package path (\`a\` and \`./a\`, or one name twice), so which one a client sees is not knowable. ${REFUSED}`,
  },
  'upload.file-dir-conflict': {
    rule: 'AR9O5',
    severity: 'error',
    text: `An entry lies below a path that another entry makes a file or a link. ${REFUSED}`,
  },
  'upload.hard-link': {
    rule: 'AR9O5',
    severity: 'error',
    text: `A hard link names no regular file earlier in the archive (one that does is read as a copy of it). ${REFUSED}`,
  },
  'upload.entry-unsupported': {
    rule: 'AR9O5',
    severity: 'error',
    text: `An entry is of a kind a package cannot hold: an encrypted zip entry, a compression method other than stored or deflate, a tar entry type this reader does not know, a package tree's value that is no file, folder, link or special entry. ${REFUSED}`,
  },
  'upload.too-many-entries': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The upload holds more entries than the limit (20,000 unless configured). ${REFUSED}`,
  },
  'upload.too-large': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The upload unpacks to more bytes than the limit (the per-package limit, 256 MiB, unless configured); it is refused as the bytes arrive, so a bomb never fills memory. ${REFUSED}`,
  },
  'upload.compression-ratio': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The upload unpacks to more than the limit's multiple of its own size (200 unless configured, counted past the first MiB): the shape of a compression bomb. ${REFUSED}`,
  },
  'upload.malformed': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The upload is not the archive it claims to be: not a zip or gzip, a damaged or truncated stream, a bad tar header checksum, sizes that disagree. ${REFUSED}`,
  },
} as const satisfies Record<string, FindingCodeInfo>);

export type UploadFindingCode = keyof typeof UPLOAD_FINDING_CODES;
