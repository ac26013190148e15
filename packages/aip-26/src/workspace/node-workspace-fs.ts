import * as fs from 'node:fs';
import {
  DOCUMENT_LIMITS,
  DocumentTooLargeError,
  FRONTMATTER_LIMITS,
  findFrontmatter,
  parseUntrustedYaml,
} from '@agentproto/documents';
import {
  type InsideOpener,
  NotInsideError,
  insideOpener,
  openDirInside,
  openInside,
  readDescriptorInto,
  readFileInside,
} from '@agentproto/fs-inside';
import type { WorkspaceEntry, WorkspaceFs } from '../code/types.js';
import type { OpenedFile } from '../tar/bundle-plan.js';
import { keepShape } from '../tar/keep-shape.js';

/** A path in the workspace that cannot be used: a link out of it, a loop, a dangling link. */
export class WorkspaceLinkError extends Error {
  readonly code = 'AIP26_WORKSPACE_LINK';
  constructor(
    readonly path: string,
    readonly reason: 'escapes' | 'loop' | 'dangling' | 'special',
  ) {
    super(
      `${JSON.stringify(path)}: ${reason === 'escapes' ? 'a link that leads out of the workspace' : reason === 'loop' ? 'a link loop' : reason === 'dangling' ? 'a link to nothing' : 'neither a file nor a folder'}`,
    );
    this.name = 'WorkspaceLinkError';
  }
}

/**
 * A workspace file or folder changed while it was being read: it was replaced, or its size
 * is not the one it had when its folder was listed. The message names the workspace path
 * only: never a size, and never anything about where a swapped link led.
 */
/**
 * A code-workspace folder whose manifest is missing or is not one: no manifest.yaml nor
 * CODE.md, a CODE.md without front matter, or a document that parsed to something other
 * than a mapping. Typed, so a host (and the CLI) can tell it from a bug in the reader.
 */
export class WorkspaceManifestError extends Error {
  readonly code = 'AIP26_WORKSPACE_MANIFEST';
  constructor(
    readonly file: string,
    readonly reason: 'missing' | 'no-front-matter' | 'not-a-mapping',
  ) {
    super(
      reason === 'missing'
        ? 'no manifest.yaml or CODE.md'
        : reason === 'no-front-matter'
          ? `${file} has no front matter`
          : `${file} is not a mapping`,
    );
    this.name = 'WorkspaceManifestError';
  }
}

export class WorkspaceChangedError extends Error {
  readonly code = 'AIP26_WORKSPACE_CHANGED';
  constructor(readonly path: string) {
    super(`${JSON.stringify(path)} changed while it was being read`);
    this.name = 'WorkspaceChangedError';
  }
}

/**
 * What a reader nodeWorkspaceFs made does for the bundle writer beyond WorkspaceFs: list a
 * folder without a `stat` of each of its files (their size and mode are left out), and open
 * a file, measuring it through the descriptor its bytes are then read through. A bundle of
 * 2,000 files made 2,000 fewer calls into the kernel, and 2,000 fewer Stats objects (each
 * with four Dates on Node 20), this way.
 */
export interface MeasureOnOpen {
  readDir(path: string): Promise<WorkspaceEntry[]>;
  open(path: string): Promise<OpenedFile>;
}

/** The reader behind each WorkspaceFs nodeWorkspaceFs made, and the functions it gave that object. */
const readers = new WeakMap<WorkspaceFs, { reader: NodeWorkspaceReader; functions: WorkspaceFs }>();

/**
 * The reader behind a WorkspaceFs nodeWorkspaceFs made, whose calls the object only passes
 * on: for that very object only, and only while its functions are still the ones it was
 * made with, so what a host put in their place (its own readDir or readFileInto, in a
 * wrapper of its own or in that object) is always what is called. Its methods are the
 * same functions in every bundle (see NodeWorkspaceReader).
 */
export function workspaceReaderOf(fs: WorkspaceFs): WorkspaceFs | undefined {
  return readerAsMade(fs);
}

/** The MeasureOnOpen of a reader nodeWorkspaceFs made: that very object only, as it was made (see workspaceReaderOf). */
export function measureOnOpenOf(fs: WorkspaceFs): MeasureOnOpen | undefined {
  return readerAsMade(fs)?.unmeasured;
}

function readerAsMade(fs: WorkspaceFs): NodeWorkspaceReader | undefined {
  const made = readers.get(fs);
  if (made === undefined) return undefined;
  const { functions } = made;
  const unchanged =
    fs.readFile === functions.readFile &&
    fs.readFileInto === functions.readFileInto &&
    fs.readDir === functions.readDir &&
    fs.stat === functions.stat &&
    fs.readManifest === functions.readManifest;
  return unchanged ? made.reader : undefined;
}

/** A workspace file open for the archive: measured and read through one descriptor. */
class OpenedWorkspaceFile implements OpenedFile {
  constructor(
    private readonly fd: number,
    private readonly rel: string,
    readonly size: number,
    readonly executable: boolean,
  ) {}

  readInto(target: Buffer): void {
    try {
      readDescriptorInto(this.fd, target, this.rel);
    } catch (error) {
      if (error instanceof NotInsideError) throw new WorkspaceChangedError(this.rel);
      throw error;
    }
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** Synchronous work between two turns of the event loop. */
const SLICE_MS = 4;

/**
 * A monotonic clock in milliseconds. Not `performance.now()`: the global `performance` loads
 * perf_hooks on first use (~1-2.5 ms of a process's start, before the first file is read).
 */
function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * The default WorkspaceFs: a folder on disk. Paths are workspace-relative and already
 * checked (no `..`, not absolute). Links are followed when they resolve inside the
 * workspace, so a bundle holds their content and never a link; a link out of the
 * workspace, a loop or a dangling link is refused. Reads are synchronous, in slices between
 * which the event loop runs: for the many small files of a workspace that is several times
 * faster than a round trip through libuv's thread pool per call.
 *
 * The workspace belongs to someone the host does not trust, who may swap its folders for
 * links while it is read. So nothing is checked by name and then opened by name: every
 * file and folder is opened first, its descriptor proven inside the workspace
 * (`openInside`; a file packed, by its one name in its folder's proven descriptor, see
 * `insideOpener`), and its bytes, size and listing come from that descriptor only.
 */
export function nodeWorkspaceFs(root: string): WorkspaceFs {
  const reader = new NodeWorkspaceReader(fs.realpathSync.native(root));
  // The host's object: plain functions of its own (a host may take one out of it, or spread
  // it into a wrapper of its own), each passing the call on to the reader.
  const workspace: WorkspaceFs = {
    readFile: (rel) => reader.readFile(rel),
    readFileInto: (rel, target) => reader.readFileInto(rel, target),
    readDir: (rel) => reader.readDir(rel),
    stat: (rel) => reader.stat(rel),
    readManifest: (rel) => reader.readManifest(rel),
  };
  readers.set(workspace, { reader, functions: { ...workspace } });
  // Holds a path and a folder descriptor until the next turn at most: kept for its shape (see keepShape).
  keepShape(reader);
  return workspace;
}

/**
 * nodeWorkspaceFs's reader, as methods of a class rather than closures of each call. V8
 * compiles a bundle's per-file loop (listing, reading) against the functions it calls,
 * and a closure made for one bundle is another function in the next: 2,000 files, the
 * second bundle of a process threw away the code of the loop that reads the files at its
 * first file, and compiled it again (~20 ms of compile on one of two cores, while the
 * other compressed). A method is the same function in every bundle.
 */
class NodeWorkspaceReader implements WorkspaceFs {
  /** The listing without a `stat` of each file, and the open that measures (MeasureOnOpen). */
  readonly unmeasured: MeasureOnOpen = new UnmeasuredListing(this);
  // Files are read in archive order, folder by folder: each through its folder's proven
  // descriptor, which the opener holds until the next turn of the event loop at most.
  private readonly opener: InsideOpener;
  private since = monotonicMs();

  constructor(private readonly realRoot: string) {
    this.opener = insideOpener(realRoot);
  }

  async readFile(rel: string): Promise<Uint8Array> {
    const turn = this.breathe();
    if (turn !== undefined) await turn;
    return proven(rel, () => readFileInside(this.realRoot, rel).bytes);
  }

  async readFileInto(rel: string, target: Buffer): Promise<void> {
    const turn = this.breathe();
    if (turn !== undefined) await turn;
    proven(rel, () => {
      const { fd, stats } = this.opener.open(rel);
      try {
        // The size the bundle was laid out with must be the size of the file opened: a
        // file replaced since it was listed is refused, whatever it is now.
        if (!stats.isFile() || stats.size !== target.length) throw new WorkspaceChangedError(rel);
        readDescriptorInto(fd, target, rel);
      } finally {
        fs.closeSync(fd);
      }
    });
  }

  readDir(rel: string): Promise<WorkspaceEntry[]> {
    return this.list(rel, true);
  }

  async stat(rel: string): Promise<{ type: 'file' | 'directory'; size: number; executable: boolean } | undefined> {
    try {
      return this.statOf(rel);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
        return undefined;
      throw error;
    }
  }

  async readManifest(rel: string): Promise<Record<string, unknown>> {
    // Each candidate is read like any workspace file, through a descriptor proven inside:
    // a manifest that is a link out of the workspace is refused, not read. And never more
    // of it than the parser may take: a manifest of gigabytes costs no more memory than
    // one at the cap.
    const read = (name: string, maxBytes: number): ManifestText | undefined => {
      const path = rel === '' ? name : `${rel}/${name}`;
      try {
        return proven(path, () => readHead(this.realRoot, path, maxBytes));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    };
    return readManifestIn(read);
  }

  /** MeasureOnOpen's open: the file opened and proven, measured through its descriptor. */
  async open(rel: string): Promise<OpenedFile> {
    const turn = this.breathe();
    if (turn !== undefined) await turn;
    return proven(rel, () => {
      const { fd, stats } = this.opener.open(rel);
      if (!stats.isFile()) {
        fs.closeSync(fd);
        throw new WorkspaceChangedError(rel);
      }
      return new OpenedWorkspaceFile(fd, rel, stats.size, (stats.mode & 0o111) !== 0);
    });
  }

  /** A folder's entries; with `measure`, each file's size and mode from an `lstat` of it. */
  async list(rel: string, measure: boolean): Promise<WorkspaceEntry[]> {
    const turn = this.breathe();
    if (turn !== undefined) await turn;
    // Listed and measured through the folder's proven descriptor: a name from this
    // listing is a name inside the workspace, and every file is opened and proven again
    // before a byte of it is read.
    const dir = proven(rel, () => openDirInside(this.realRoot, rel));
    const entries: WorkspaceEntry[] = [];
    try {
      for (const dirent of proven(rel, () => dir.entries())) {
        const childRel = rel === '' ? dirent.name : `${rel}/${dirent.name}`;
        if (dirent.isSymbolicLink()) {
          const info = this.statOf(childRel);
          entries.push({ name: dirent.name, ...info });
        } else if (dirent.isDirectory()) {
          entries.push({ name: dirent.name, type: 'directory' });
        } else if (dirent.isFile()) {
          if (!measure) {
            // Measured when it is opened to be read (MeasureOnOpen.open).
            entries.push({ name: dirent.name, type: 'file' });
            continue;
          }
          const stat = dir.lstat(dirent.name);
          if (!stat?.isFile()) throw new WorkspaceChangedError(childRel);
          entries.push({ name: dirent.name, type: 'file', size: stat.size, executable: (stat.mode & 0o111) !== 0 });
        } else {
          throw new WorkspaceLinkError(childRel, 'special');
        }
      }
    } finally {
      dir.close();
    }
    return entries;
  }

  /** A turn of the event loop once the slice is used up; undefined (no promise to await) before. */
  private breathe(): Promise<void> | undefined {
    if (monotonicMs() - this.since < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        this.since = monotonicMs();
        resolve();
      }),
    );
  }

  private statOf(rel: string): { type: 'file' | 'directory'; size: number; executable: boolean } {
    return proven(rel, () => {
      const { fd, stats } = openInside(this.realRoot, rel);
      fs.closeSync(fd);
      if (stats.isDirectory()) return { type: 'directory' as const, size: 0, executable: false };
      return { type: 'file' as const, size: stats.size, executable: (stats.mode & 0o111) !== 0 };
    });
  }
}

/** A reader's MeasureOnOpen: its listing without a `stat` of each file, and its open. */
class UnmeasuredListing implements MeasureOnOpen {
  constructor(private readonly reader: NodeWorkspaceReader) {}

  readDir(rel: string): Promise<WorkspaceEntry[]> {
    return this.reader.list(rel, false);
  }

  open(rel: string): Promise<OpenedFile> {
    return this.reader.open(rel);
  }
}

/** Runs a proven read; a refusal becomes this package's typed error, with the workspace path only. */
function proven<T>(rel: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof NotInsideError)) throw error;
    if (error.reason === 'changed') throw new WorkspaceChangedError(rel);
    throw new WorkspaceLinkError(rel, error.reason);
  }
}

/** The first `maxBytes` bytes of a file as text, and whether that is all of it. */
interface ManifestText {
  text: string;
  size: number;
  whole: boolean;
}

function readHead(realRoot: string, rel: string, maxBytes: number): ManifestText {
  const { fd, stats } = openInside(realRoot, rel);
  try {
    if (!stats.isFile()) throw Object.assign(new Error(`${JSON.stringify(rel)} is a folder`), { code: 'EISDIR' });
    const head = Buffer.alloc(Math.min(stats.size, maxBytes));
    let filled = 0;
    while (filled < head.length) {
      const count = fs.readSync(fd, head, filled, head.length - filled, filled);
      if (count === 0) break;
      filled += count;
    }
    return { text: head.subarray(0, filled).toString('utf8'), size: stats.size, whole: stats.size <= maxBytes };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A code-workspace folder's manifest: `manifest.yaml` (or `.yml`) in the rich form, else
 * the YAML front matter of a lean `CODE.md`.
 */
function readManifestIn(read: (name: string, maxBytes: number) => ManifestText | undefined): Record<string, unknown> {
  for (const name of ['manifest.yaml', 'manifest.yml']) {
    // One byte past the cap is enough to know the file is over it.
    const manifest = read(name, DOCUMENT_LIMITS.maxBytes + 1);
    if (manifest === undefined) continue;
    if (!manifest.whole) throw new DocumentTooLargeError(name, 'yaml', DOCUMENT_LIMITS.maxBytes, manifest.size);
    // A workspace owner writes the manifest: bounded and parsed by the shared rules for
    // untrusted documents (a DocumentError with a stable code, never an exhausted heap).
    return asRecord(parseUntrustedYaml(manifest.text, { source: name }), name);
  }
  // The front matter is at most FRONTMATTER_LIMITS.maxBytes UTF-16 units, which UTF-8
  // spells in at most three bytes each: past that head, the body of CODE.md is never read.
  const code = read('CODE.md', 3 * FRONTMATTER_LIMITS.maxBytes + 16);
  if (code === undefined) throw new WorkspaceManifestError('manifest.yaml', 'missing');
  const block = findFrontmatter(code.text, FRONTMATTER_LIMITS.maxBytes);
  if (block.found === 'too-large' || (block.found !== 'block' && !code.whole)) {
    throw new DocumentTooLargeError('CODE.md', 'yaml', FRONTMATTER_LIMITS.maxBytes, undefined);
  }
  if (block.found !== 'block') throw new WorkspaceManifestError('CODE.md', 'no-front-matter');
  return asRecord(
    // The block starts on the file's second line (after "---"): positions count in the file.
    parseUntrustedYaml(block.yaml, { source: 'CODE.md', limits: FRONTMATTER_LIMITS, firstLine: 2 }),
    'CODE.md',
  );
}

function asRecord(value: unknown, name: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new WorkspaceManifestError(name, 'not-a-mapping');
  return value as Record<string, unknown>;
}
