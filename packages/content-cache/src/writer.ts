import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { FillOutsideDestinationError } from './errors.js';
import type { StoreFs } from './store-fs.js';
import type { KnownFile } from './tree.js';

export interface WriteFileOptions {
  /** Any execute bit makes the stored file 0755; otherwise it is 0644. */
  mode?: number;
}

/**
 * Writes files into a fill's destination and remembers what it wrote, so publication need
 * not read the tree back: each file is hashed while its write is in flight, and a file this
 * writer created keeps the mode it was created with, so sealing needs no `lstat` for it.
 * A file written any other way is read, hashed and checked at publication as usual. A file
 * written here and later changed by other means (to bytes of the same length, or another
 * mode) would keep what was recorded: the fill is the host's own code, and `verify()`
 * re-hashes every file from disk.
 */
export class TreeWriter {
  readonly known = new Map<string, KnownFile>();
  private readonly folders = new Map<string, Promise<unknown>>();
  /** Per normalised mode: whether a file created with it was seen to keep it (the umask may strip bits). */
  private readonly modeHolds = new Map<number, Promise<boolean>>();

  constructor(
    private readonly fs: StoreFs,
    readonly destination: string,
  ) {}

  async writeFile(path: string, data: Uint8Array | string, options: WriteFileOptions = {}): Promise<void> {
    const rel = checkRelative(path);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const abs = join(this.destination, rel);
    const mode = (options.mode ?? 0o644) & 0o111 ? 0o755 : 0o644;
    await this.folder(dirname(abs));
    // Start the write, then hash while the thread pool copies the bytes. `wx` creates the
    // file, so its mode is the one asked for (less the umask, checked once per mode).
    const created = this.fs.writeFile(abs, bytes, { mode, flag: 'wx' }).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
        return false;
      },
    );
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    let trustMode = await created;
    if (!trustMode)
      await this.fs.writeFile(abs, bytes); // An overwrite keeps the old mode: seal reads it.
    else trustMode = await this.modeHoldsFor(mode, abs);
    this.known.set(
      rel,
      trustMode && !this.known.has(rel) ? { size: bytes.byteLength, sha256, mode } : { size: bytes.byteLength, sha256 },
    );
  }

  private modeHoldsFor(mode: number, abs: string): Promise<boolean> {
    let holds = this.modeHolds.get(mode);
    if (!holds) {
      holds = this.fs.lstat(abs).then((stat) => (stat.mode & 0o7777) === mode);
      this.modeHolds.set(mode, holds);
    }
    return holds;
  }

  /** Creates a folder (and its parents) once, however many files go into it. */
  private folder(abs: string): Promise<unknown> {
    let made = this.folders.get(abs);
    if (!made) {
      made = this.fs.mkdir(abs, { recursive: true });
      this.folders.set(abs, made);
    }
    return made;
  }
}

/** A path relative to the destination, with `/` separators, that cannot leave it. */
function checkRelative(path: string): string {
  const segments = path.split('/');
  const bad =
    path.length === 0 ||
    path.includes('\0') ||
    path.includes('\\') ||
    path.startsWith('/') ||
    segments.some((s) => s === '' || s === '.' || s === '..');
  if (bad) throw new FillOutsideDestinationError(path);
  return path;
}
