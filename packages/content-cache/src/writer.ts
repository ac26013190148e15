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
 * Writes files into a fill's destination and remembers the SHA-256 of what it wrote, so
 * publication need not read the tree back to hash it: the data is hashed while it is in
 * memory, overlapping the write itself. A file written any other way is read and hashed
 * at publication as usual. A file written here and later changed to other bytes of the
 * same length by other means would keep the old hash: the fill is the host's own code,
 * and `verify()` re-hashes every file from disk.
 */
export class TreeWriter {
  readonly known = new Map<string, KnownFile>();
  private readonly folders = new Map<string, Promise<unknown>>();

  constructor(
    private readonly fs: StoreFs,
    readonly destination: string,
  ) {}

  async writeFile(path: string, data: Uint8Array | string, options: WriteFileOptions = {}): Promise<void> {
    const rel = checkRelative(path);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const abs = join(this.destination, rel);
    await this.folder(dirname(abs));
    // Start the write, then hash while the thread pool copies the bytes: neither waits on the other.
    const written = this.fs.writeFile(abs, bytes, { mode: options.mode ?? 0o644 });
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await written;
    this.known.set(rel, { size: bytes.byteLength, sha256 });
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
