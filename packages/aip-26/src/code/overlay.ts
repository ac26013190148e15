import type { OpenedFile } from '../tar/bundle-plan.js';
import { keepShape } from '../tar/keep-shape.js';
import { BundleSizeError, SourceResolutionError } from './errors.js';
import type { BundleLimits, Source } from './types.js';

/**
 * One file of the merged bundle: its bytes, or (for workspace files) its size and a reader,
 * so the files are read one at a time while the archive is written instead of all held in
 * memory at once.
 */
export type MeasuredFile = {
  executable: boolean;
  /** Which source wrote it last. */
  source: string;
} & ({ data: Buffer } | { size: number; read: () => Promise<Buffer>; readInto?: (target: Buffer) => Promise<void> });

/**
 * A workspace file listed without a `stat` (only for a bundle packed while its one folder
 * is listed): its size and mode come from the descriptor `open` gives when the archive
 * reaches it, and its bytes count from then (`Overlay.measured`). `measure` gives it as a
 * MeasuredFile, by a `stat`, to anything that needs its size before that.
 */
export interface UnmeasuredFile {
  source: string;
  open: () => Promise<OpenedFile>;
  measure: () => Promise<MeasuredFile>;
}

export type BundleFile = MeasuredFile | UnmeasuredFile;

export function isUnmeasured(file: BundleFile): file is UnmeasuredFile {
  return 'measure' in file;
}

function sizeOf(file: BundleFile): number {
  return isUnmeasured(file) ? 0 : 'data' in file ? file.data.length : file.size;
}

export function contentOf(file: MeasuredFile): Promise<Buffer> {
  return 'data' in file ? Promise.resolve(file.data) : file.read();
}

/**
 * What an Overlay tells of every file once it is in (a later one with the same path
 * included). What `added` returns, `set` returns: a wait the caller awaits before it adds
 * the next file. An object whose method is called, not a callback: a method of a class is
 * the same function in every bundle, so the code V8 compiled for `set`, which calls it
 * for every file, holds for the next bundle too (a closure made for each bundle threw it
 * away at the next bundle's first file).
 */
export interface OverlayListener {
  added(path: string, file: BundleFile, overlay: Overlay): Promise<void> | undefined;
}

/**
 * The merged bundle: bundle path → file, later sources overwriting earlier ones (AIP-26
 * overlay, last wins). Limits are checked on every insert, so a source that would push the
 * bundle over them fails while it is being read, not after.
 */
export class Overlay {
  readonly files = new Map<string, BundleFile>();
  /** Every folder implied by a file path → the first source that implied it. */
  private readonly folders = new Map<string, string>();
  private bytes = 0;
  /** `listener`: told of every file once it is in (see OverlayListener). */
  constructor(
    private readonly limits: Required<BundleLimits>,
    private readonly listener?: OverlayListener,
  ) {}

  get totalBytes(): number {
    return this.bytes;
  }

  set(path: string, file: BundleFile, declaration: Source | string): Promise<void> | undefined {
    const folderOwner = this.folders.get(path);
    if (folderOwner !== undefined) {
      throw new SourceResolutionError(
        file.source,
        declaration,
        'file-directory-clash',
        `${JSON.stringify(path)} is a file here but a folder in ${folderOwner}`,
      );
    }
    // Every folder here has its own parents here too, and none of them is a file (a file is
    // never set where a folder is, nor a folder implied where a file is): a file whose folder
    // is known needs no walk up its parents. Most files of a listing share the folder of the
    // one before, so this is one lookup a file, not one a level.
    const slash = path.lastIndexOf('/');
    const parents = slash === -1 || this.folders.has(path.slice(0, slash)) ? NO_PARENTS : parentsOf(path);
    for (const parent of parents) {
      const owner = this.files.get(parent);
      if (owner) {
        throw new SourceResolutionError(
          file.source,
          declaration,
          'file-directory-clash',
          `${JSON.stringify(parent)} is a folder here but a file in ${owner.source}`,
        );
      }
    }
    const previous = this.files.get(path);
    const bytes = this.bytes - (previous ? sizeOf(previous) : 0) + sizeOf(file);
    if (bytes > this.limits.maxBytes) throw new BundleSizeError('bytes', this.limits.maxBytes, bytes, file.source);
    if (!previous && this.files.size + 1 > this.limits.maxFiles)
      throw new BundleSizeError('files', this.limits.maxFiles, this.files.size + 1, file.source);
    this.bytes = bytes;
    this.files.set(path, file);
    for (const parent of parents) if (!this.folders.has(parent)) this.folders.set(parent, file.source);
    return this.listener?.added(path, file, this);
  }

  /**
   * An unmeasured file's size, once it is opened: its bytes are counted now, and the byte
   * limit checked as `set` checks it. Files are opened in the order they were set (the
   * archive's, for the one folder source they come from), so the file that passes the limit
   * and the count it passes it with are the ones `set` would have found.
   */
  measured(path: string, file: UnmeasuredFile, size: number): void {
    // Measured again by measureAll since (a writer that stopped): counted there.
    if (this.files.get(path) !== file) return;
    const bytes = this.bytes + size;
    if (bytes > this.limits.maxBytes) throw new BundleSizeError('bytes', this.limits.maxBytes, bytes, file.source);
    this.bytes = bytes;
  }

  /**
   * Every unmeasured file measured (a `stat` each, in the order they were set) and put back
   * as a MeasuredFile, the byte count made again from the start, the limit checked at each
   * file as `set` checks it: for a bundle that is not packed while it is listed after all,
   * or a refusal that must know whether the bytes were over the limit first. Counts from
   * `measured` before are dropped, and a `measured` of a file measured here is not counted.
   */
  async measureAll(): Promise<void> {
    let bytes = 0;
    for (const [path, file] of this.files) {
      let measured = file;
      if (isUnmeasured(file)) {
        measured = await file.measure();
        this.files.set(path, measured);
      }
      bytes += sizeOf(measured);
      if (bytes > this.limits.maxBytes) throw new BundleSizeError('bytes', this.limits.maxBytes, bytes, file.source);
    }
    this.bytes = bytes;
  }

  /**
   * The bundle is made and nothing reads this overlay again: it lets go of its files and
   * folders and is kept for the next bundle (see keepShape). Its byte count stays.
   */
  keepForNext(): void {
    this.files.clear();
    this.folders.clear();
    keepShape(this);
  }
}

const NO_PARENTS: readonly string[] = [];

function parentsOf(path: string): string[] {
  const parents: string[] = [];
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) parents.push(path.slice(0, i));
  return parents;
}
