// What every upload reader shares: its limits, and the tree it fills entry by entry with the
// same checks whatever the upload's format. No `node:` import.
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_PACKAGE_BYTES, type PackageReadLimits } from '../read/reader.js';
import { packagePathSegments } from '../read/resolve.js';
import { type PackageTree, type PackageTreeEntry, shownPath } from '../read/tree.js';
import type { PackageUpload } from '../validate/core.js';
import { UPLOAD_FINDING_CODES, type UploadFindingCode } from './codes.js';

/**
 * The bounds of reading an upload, checked as it is read, so an upload built to exhaust
 * memory stops at them. The per-file and per-package limits are the reader's own
 * (PackageReadLimits): a file over the per-file limit is kept unread, as the reader keeps a
 * large file on a disk unread.
 */
export interface UploadLimits extends PackageReadLimits {
  /** Entries (files, folders, links) the upload may hold. Default 20,000. */
  maxEntries?: number;
  /** UTF-8 bytes of one entry's name. Default 4,096. */
  maxPathBytes?: number;
  /**
   * Bytes unpacked per byte of the upload, counted past the first MiB unpacked (small uploads
   * of text compress far better than 200:1 and never reach it). Default 200.
   */
  maxCompressionRatio?: number;
}

export const DEFAULT_UPLOAD_LIMITS = Object.freeze({
  maxEntries: 20_000,
  maxPathBytes: 4096,
  maxCompressionRatio: 200,
  maxFileBytes: DEFAULT_MAX_FILE_BYTES,
  maxPackageBytes: DEFAULT_MAX_PACKAGE_BYTES,
});

const RATIO_ALLOWANCE = 1024 * 1024;

/** An upload refused part-way: the finding that says why. */
export class UploadRefused extends Error {
  constructor(readonly finding: Finding) {
    super(finding.message);
  }
}

export function refuse(code: UploadFindingCode, path: string, message: string): UploadRefused {
  return new UploadRefused(findingFrom(UPLOAD_FINDING_CODES, code, path, message));
}

const encoder = new TextEncoder();

/**
 * A tree being filled from an upload. Every entry is checked as it is added: its name (a
 * package path within the length limit, not seen before), the count of entries, and the
 * bytes unpacked so far against the package limit and the compression ratio.
 */
export class UploadTree {
  readonly limits: Required<UploadLimits>;
  private readonly entries = new Map<string, PackageTreeEntry>();
  private count = 0;
  private unpacked = 0;

  constructor(
    limits: UploadLimits,
    /** Bytes of the upload as it arrived (compressed), for the ratio. */
    private readonly uploadBytes: number,
  ) {
    this.limits = { ...DEFAULT_UPLOAD_LIMITS, ...definedOnly(limits) };
  }

  /** Counts one more entry; refuses past the limit. Called for every entry, skipped or not. */
  countEntry(): void {
    this.count += 1;
    if (this.count > this.limits.maxEntries)
      throw refuse('upload.too-many-entries', '', `holds more than ${this.limits.maxEntries} entries`);
  }

  /** The package path of an entry's name, or a refusal naming it. `''` is the root. */
  pathOf(name: string): string {
    if (encoder.encode(name).length > this.limits.maxPathBytes)
      throw refuse('upload.path-too-long', shownPath(name), `is longer than ${this.limits.maxPathBytes} bytes`);
    const segments = packagePathSegments(name);
    if (segments === undefined)
      throw refuse(
        'upload.path-invalid',
        shownPath(name),
        'is not a package path: it is absolute, or holds "..", a backslash, NUL or a drive letter',
      );
    return segments.join('/');
  }

  /**
   * Counts `bytes` more unpacked bytes against the package limit (plus `headroom`, for what
   * an archive holds beside its files: tar headers) and the compression ratio; refuses the
   * upload past either. Called as bytes arrive, before they are kept.
   */
  unpack(bytes: number, headroom = 0): void {
    this.unpacked += bytes;
    if (this.unpacked > this.limits.maxPackageBytes + headroom)
      throw refuse('upload.too-large', '', `unpacks to more than ${this.limits.maxPackageBytes} bytes`);
    const ratio = this.limits.maxCompressionRatio;
    if (this.unpacked > RATIO_ALLOWANCE && this.unpacked > ratio * Math.max(1, this.uploadBytes))
      throw refuse(
        'upload.compression-ratio',
        '',
        `unpacks to more than ${ratio} times its ${this.uploadBytes} bytes: the shape of a compression bomb`,
      );
  }

  /** Adds an entry at a package path (from pathOf); the root itself is never an entry. */
  add(path: string, entry: PackageTreeEntry, name: string): void {
    if (path === '') {
      if (entry.type === 'directory') return;
      throw refuse('upload.path-invalid', shownPath(name), 'names the package root itself, which is a folder');
    }
    if (this.entries.has(path)) throw refuse('upload.duplicate', path, 'names a package path another entry names too');
    this.entries.set(path, entry);
  }

  get(path: string): PackageTreeEntry | undefined {
    return this.entries.get(path);
  }

  /** The upload as read: the tree, its single top folder dropped when it wraps the package. */
  finish(findings: readonly Finding[] = []): PackageUpload {
    return { tree: unwrapped(this.entries), findings: sortFindings(findings), refused: false };
  }
}

/** An upload refused with `finding`: an empty tree. */
export function refusedUpload(finding: Finding): PackageUpload {
  return { tree: new Map(), findings: [finding], refused: true };
}

/**
 * The tree without its top folder when plugin.json is not at the root but in that folder, and
 * every entry lies in it: what zipping a folder ("acme.tools/plugin.json") or picking one in a
 * browser gives. Any other tree is the package as it is.
 */
function unwrapped(entries: ReadonlyMap<string, PackageTreeEntry>): PackageTree {
  if (entries.size === 0 || entries.has('plugin.json')) return entries;
  let top: string | undefined;
  for (const path of entries.keys()) {
    const first = path.split('/')[0] as string;
    if (top !== undefined && first !== top) return entries;
    top = first;
  }
  const prefix = `${top}/`;
  const folder = entries.get(top as string);
  if ((folder !== undefined && folder.type !== 'directory') || !entries.has(`${prefix}plugin.json`)) return entries;
  const inner = new Map<string, PackageTreeEntry>();
  for (const [path, entry] of entries) if (path.startsWith(prefix)) inner.set(path.slice(prefix.length), entry);
  return inner;
}

function definedOnly(limits: UploadLimits): Partial<Required<UploadLimits>> {
  return Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
}
