import { sortInArchiveOrder } from '@agentproto/archive';
import { BundleEntryError } from './errors.js';

/**
 * One file of a bundle, as the merge produced it: its bytes, or its size and a way to read
 * them when the archive reaches it (so a large bundle is never all in memory at once).
 */
export type BundleEntry = {
  /** Bundle path: relative, '/'-separated, NFC, no "." or ".." or empty segment. */
  path: string;
  /** Packed with mode 0755 when true, 0644 otherwise. */
  executable?: boolean;
} & ({ data: Buffer } | { size: number; read: () => Promise<Buffer>; readInto?: (target: Buffer) => Promise<void> });

/** A bundle entry with its bytes in memory (what reading an archive gives). */
export interface InMemoryEntry {
  path: string;
  data: Buffer;
  executable?: boolean;
}

/**
 * A file opened for the archive: its size and mode as its open descriptor has them, its
 * bytes read through that descriptor. Closed by the writer once its bytes are in.
 */
export interface OpenedFile {
  readonly size: number;
  readonly executable: boolean;
  /** Fills `target` (exactly `size` bytes); throws when the file is not that size any more. */
  readInto(target: Buffer): void;
  close(): void;
}

/**
 * A file whose size and mode are taken when the archive reaches it, by opening it (see
 * OrderedBundleWriter): its folder was listed without a `stat` of each file.
 */
export interface OpenedLaterEntry {
  path: string;
  open: () => Promise<OpenedFile>;
}

/** One tar entry to write, in archive order. Directory names end with "/". */
export interface TarItem {
  name: string;
  type: 'file' | 'directory';
  mode: number;
  data: Buffer | undefined;
  size: number;
  read?: () => Promise<Buffer>;
  /** Fills `target` (exactly `size` bytes) with the file: lets the writer reuse its buffers. */
  readInto?: (target: Buffer) => Promise<void>;
  /** An OpenedLaterEntry's: `size` and `mode` are set once it is opened. */
  open?: () => Promise<OpenedFile>;
}

const FILE_MODE = 0o644;
const EXECUTABLE_MODE = 0o755;
const DIRECTORY_MODE = 0o755;

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const DRIVE_LETTER = /^[A-Za-z]:/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * What is wrong with a bundle path, or undefined when it is a normalised bundle path. The
 * rules are the extractor's rules (see entry-name.ts), so every bundle this module writes is
 * one `extractTarGz` accepts.
 */
export function bundlePathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string') return 'the path is not a string';
  if (path === '') return 'the path is empty';
  // Printable ASCII (nearly every real path) holds no NUL and no surrogate, and NFC leaves it as it is.
  const ascii = PRINTABLE_ASCII.test(path);
  if (!ascii && path.includes('\0')) return 'the path holds NUL';
  if (path.includes('\\')) return 'the path holds a backslash';
  if (path.startsWith('/')) return 'the path is absolute';
  if (DRIVE_LETTER.test(path)) return 'the path starts with a drive letter';
  if (!ascii && LONE_SURROGATE.test(path)) return 'the path is not well-formed Unicode (lone surrogate)';
  // Not normalised here on purpose: two spellings of one name folding into one entry
  // would be a silent overwrite; the caller normalises, this only checks.
  if (!ascii && path.normalize('NFC') !== path) return 'the path is not in Unicode NFC form';
  for (const segment of path.split('/')) {
    if (segment === '') return 'the path has an empty segment (leading, trailing or double "/")';
    if (segment === '.' || segment === '..') return `the path has a "${segment}" segment`;
  }
  return undefined;
}

/** A Buffer view of the same bytes (the writer copies from a Buffer): never a copy. */
function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Checks the entries and lays out the archive: every file, plus one directory entry for
 * every parent folder (its name ending in "/"), in the order of GNU tar `--sort=name`
 * (`sortInArchiveOrder`): names compared segment by segment by their UTF-8 bytes, each
 * directory immediately before its whole subtree. So a bundle lists, entry for entry, what
 * `tar -c --sort=name` lists for the same files on disk. The input order never matters: it
 * is sorted before it is checked, so even the error reported for a bad input is the same for
 * any order of the same entries.
 */
export function planBundle(entries: readonly BundleEntry[]): TarItem[] {
  for (const entry of entries) {
    const problem = bundlePathProblem(entry?.path);
    if (problem !== undefined) throw new BundleEntryError('invalid-path', String(entry?.path), problem);
    const lazy =
      'read' in entry && typeof entry.read === 'function' && Number.isSafeInteger(entry.size) && entry.size >= 0;
    if (!lazy && !('data' in entry && entry.data instanceof Uint8Array))
      throw new TypeError(`bundle entry ${JSON.stringify(entry.path)}: data is not a Buffer`);
  }
  const files = sortInArchiveOrder(entries, (entry) => entry.path);

  const filePaths = new Set<string>();
  for (let i = 0; i < files.length; i++) {
    const path = files[i]!.path;
    // Equal names are next to each other in any total order.
    if (i > 0 && files[i - 1]!.path === path) {
      throw new BundleEntryError('duplicate-path', path, 'the path appears twice', path);
    }
    filePaths.add(path);
  }

  const directories = new Set<string>();
  for (const { path } of files) {
    for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) {
      const parent = path.slice(0, slash);
      if (filePaths.has(parent)) {
        throw new BundleEntryError(
          'file-is-parent',
          parent,
          `is a file and also a folder of ${JSON.stringify(path)}`,
          path,
        );
      }
      // Seen before means its own parents were walked (and checked) then.
      if (directories.has(parent)) break;
      directories.add(parent);
    }
  }

  const items: TarItem[] = files.map(fileItem);
  for (const directory of directories) items.push(directoryItem(directory));
  return sortInArchiveOrder(items, (item) => item.name);
}

/** The tar item of a file entry (its path already checked). */
export function fileItem(entry: BundleEntry): TarItem {
  const mode = fileMode(entry.executable);
  return 'data' in entry
    ? { name: entry.path, type: 'file', mode, data: asBuffer(entry.data), size: entry.data.length }
    : {
        name: entry.path,
        type: 'file',
        mode,
        data: undefined,
        size: entry.size,
        read: entry.read,
        readInto: entry.readInto,
      };
}

/** The tar item of an OpenedLaterEntry (its path already checked): size and mode still to come. */
export function openedLaterItem(entry: OpenedLaterEntry): TarItem {
  return { name: entry.path, type: 'file', mode: FILE_MODE, data: undefined, size: 0, open: entry.open };
}

/** The mode of a file entry: 0755 when executable, else 0644. */
export function fileMode(executable: boolean | undefined): number {
  return executable ? EXECUTABLE_MODE : FILE_MODE;
}

/** The tar item of the folder `path` (no trailing "/"). */
export function directoryItem(path: string): TarItem {
  return { name: `${path}/`, type: 'directory', mode: DIRECTORY_MODE, data: undefined, size: 0 };
}
