import { posix } from 'node:path';
import type { Minimatch } from 'minimatch';
import { objectArray } from '../tar/object-array.js';
import type { OpenedFile } from '../tar/bundle-plan.js';
import {
  type MeasureOnOpen,
  WorkspaceChangedError,
  WorkspaceLinkError,
  measureOnOpenOf,
  workspaceReaderOf,
} from '../workspace/node-workspace-fs.js';
import { keepShape } from '../tar/keep-shape.js';
import { BundleSizeError, SourceResolutionError } from './errors.js';
import type { BundleFile, MeasuredFile, Overlay } from './overlay.js';
import type { PlannedSource } from './plan.js';
import type { WorkspaceEntry, WorkspaceFs } from './types.js';

type LocalSource = Extract<PlannedSource, { kind: 'local' }>;

export interface SourceTally {
  files: number;
  bytes: number;
}

/**
 * A `local` source: a file, a folder (recursive), or a glob, read from the workspace.
 * Targets: a file goes to `as` (or `as/<name>` when `as` ends in `/`), else its declared
 * path; a folder's files go under `as`, else under the folder's declared path (the spec's
 * default, `as` = `path`); a glob's files keep their path below the glob's fixed prefix,
 * under `as` when given, else under that prefix. The declared path is relative to the
 * manifest's folder (a lean CODE.md's), so the bundle does not depend on where it lives.
 */
export async function resolveLocal(
  source: LocalSource,
  fs: WorkspaceFs,
  overlay: Overlay,
  signal?: AbortSignal,
  measureOnOpen = false,
): Promise<SourceTally> {
  const into = new Into(
    source,
    // nodeWorkspaceFs's own object passes each call on to its reader: the reader is called
    // directly, the same methods in every bundle (see workspaceReaderOf).
    workspaceReaderOf(fs) ?? fs,
    overlay,
    signal,
    measureOnOpen ? measureOnOpenOf(fs) : undefined,
  );
  const pathGlob = hasMagic(source.path) ? splitGlob(source.path) : undefined;
  const matcher = source.glob !== undefined || pathGlob ? await globMatcher() : undefined;
  const glob = source.glob !== undefined ? matcher!(source.glob) : undefined;
  const base = pathGlob ? pathGlob.base : source.path;
  const info = await probe(fs, base).catch((error: unknown) => readFailed(source, base, error));
  if (!info) return fail(source, 'not-found', `${JSON.stringify(base)} does not exist in the workspace`);

  if (info.type === 'file') {
    if (pathGlob)
      return fail(source, 'not-found', `${JSON.stringify(base)} is a file, not a folder to match a glob in`);
    if (source.directory)
      return fail(source, 'not-found', `${JSON.stringify(source.path)} is a file, but a trailing / asks for a folder`);
    const target =
      source.as === undefined
        ? source.declaredPath
        : source.as.endsWith('/') || source.as === ''
          ? posix.join(source.as, posix.basename(source.path))
          : source.as;
    await add(into, source.path, target, info.executable, info.size);
    return into.tally;
  }

  const match = pathGlob ? matcher!(pathGlob.pattern) : glob;
  // Without `as`, the files land where the manifest's own path puts them (relative to its
  // folder): the folder, or the glob's fixed prefix, as declared.
  const targetRoot =
    source.as === undefined
      ? hasMagic(source.declaredPath)
        ? splitGlob(source.declaredPath).base
        : source.declaredPath
      : source.as.replace(/\/$/, '');
  try {
    await addFolder(into, base, targetRoot, match);
  } catch (error) {
    if (error instanceof SourceResolutionError || error instanceof BundleSizeError || error instanceof DOMException)
      throw error;
    return readFailed(source, base, error);
  }
  return into.tally;
}

/** Where a source's files go, and what was added so far. */
class Into {
  readonly tally: SourceTally = { files: 0, bytes: 0 };

  constructor(
    readonly source: LocalSource,
    readonly fs: WorkspaceFs,
    readonly overlay: Overlay,
    readonly signal: AbortSignal | undefined,
    /**
     * With a caller that takes unmeasured files (a folder's files are then listed without a
     * `stat` each): the reader's MeasureOnOpen.
     */
    readonly measure: MeasureOnOpen | undefined,
  ) {}
}

// An Into no source uses, made once for its shape alone: every per-file function below
// checks for it, and the Into of a source lives as long as its bundle (see keepShape).
keepShape(new Into(undefined as never, undefined as never, undefined as never, undefined, undefined));

/*
 * The per-file loop below (addFolder, add) is made of module functions, with the call's
 * state as arguments, not of closures made by each resolveLocal. V8 compiles a long loop
 * while it runs against the closures it sees, and throws that code away once they are
 * gone: as closures of each call, every bundle compiled the loop again after a full
 * collection (~40-60 ms of compile a bundle of 2,000 files, on one of two cores). Each
 * file's readers (lazyFile) are still closures: they are the file's, called once.
 */

/** The files below `base` that `match` takes (all without it), in archive order. */
async function addFolder(into: Into, base: string, targetRoot: string, match: Minimatch | undefined): Promise<void> {
  const files = walk(into.measure ?? into.fs, into.fs, base, '');
  try {
    await addWalked(into, files, base, targetRoot, match);
  } catch (error) {
    // As `for await` would: a failed add ends the walk, and its own error is the one thrown.
    await files.return(undefined).catch(() => {});
    throw error;
  }
}

/** addFolder's loop, which starts with the loop (see walkFrom). */
async function addWalked(
  into: Into,
  files: AsyncGenerator<WalkedFile>,
  base: string,
  targetRoot: string,
  match: Minimatch | undefined,
): Promise<void> {
  for (;;) {
    const step = await files.next();
    if (step.done === true) return;
    const file = step.value;
    if (match && !match.match(file.rel)) continue;
    if (file.unmeasured) {
      into.signal?.throwIfAborted();
      const paced = into.overlay.set(
        join(targetRoot, file.rel),
        unmeasuredFile(into, join(base, file.rel)),
        into.source.declaration,
      );
      // Its bytes are counted once it is opened (Overlay.measured).
      into.tally.files += 1;
      if (paced !== undefined) await paced;
      continue;
    }
    await add(into, join(base, file.rel), join(targetRoot, file.rel), file.executable, file.size);
  }
}

async function add(into: Into, from: string, to: string, executable: boolean, size: number | undefined): Promise<void> {
  const { source, overlay, tally } = into;
  into.signal?.throwIfAborted();
  if (size !== undefined) {
    // The size is known: the bytes are read when the archive reaches this file. A wait of
    // the writer's is awaited only when there is one: a turn of the microtask queue a file otherwise.
    const paced = overlay.set(to, lazyFile(into, from, size, executable), source.declaration);
    tally.files += 1;
    tally.bytes += size;
    if (paced !== undefined) await paced;
    return;
  }
  const data = await read(into, from);
  await overlay.set(to, { data, executable, source: source.label }, source.declaration);
  tally.files += 1;
  tally.bytes += data.length;
}

/**
 * A file listed without a `stat`: opened (and so measured) when the archive reaches it, or
 * measured by a `stat` when something needs its size before (`measure`).
 */
function unmeasuredFile(into: Into, from: string): BundleFile {
  const { source } = into;
  const measure = into.measure!;
  return {
    source: source.label,
    open: async (): Promise<OpenedFile> => {
      let file: OpenedFile;
      try {
        file = await measure.open(from);
      } catch (error) {
        return readFailed(source, from, error);
      }
      return {
        size: file.size,
        executable: file.executable,
        readInto(target) {
          try {
            file.readInto(target);
          } catch (error) {
            readFailed(source, from, error);
          }
        },
        close: () => file.close(),
      };
    },
    measure: async (): Promise<MeasuredFile> => {
      const info = await into.fs.stat!(from).catch((error: unknown) => readFailed(source, from, error));
      if (info?.type !== 'file') return readFailed(source, from, new WorkspaceChangedError(from));
      return lazyFile(into, from, info.size, info.executable);
    },
  };
}

/**
 * A file read only when the archive reaches it. Its readers are module functions bound to
 * it, not closures: V8 keeps the code it optimized for a function only while the function
 * lives, and a closure made for each file lived as long as its bundle, so every bundle
 * compiled its reader again.
 */
function lazyFile(into: Into, from: string, size: number, executable: boolean): MeasuredFile {
  return {
    size,
    read: read.bind(undefined, into, from),
    readInto: into.fs.readFileInto ? readInto.bind(undefined, into, from) : undefined,
    executable,
    source: into.source.label,
  };
}

async function readInto(into: Into, from: string, target: Buffer): Promise<void> {
  try {
    await into.fs.readFileInto!(from, target);
  } catch (error) {
    readFailed(into.source, from, error);
  }
}

async function read(into: Into, from: string): Promise<Buffer> {
  let data: Uint8Array;
  try {
    data = await into.fs.readFile(from);
  } catch (error) {
    return readFailed(into.source, from, error);
  }
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

function fail(source: LocalSource, reason: 'not-found' | 'read-failed', detail: string, cause?: unknown): never {
  // A link out of the workspace, a loop or a dangling link is a safety refusal, not a read error.
  const why = cause instanceof WorkspaceLinkError ? 'unsafe-link' : reason;
  throw new SourceResolutionError(source.label, source.declaration, why, detail, { cause });
}

/** A path of the source that could not be read: `read-failed`, the cause's message with the path. */
function readFailed(source: LocalSource, path: string, cause: unknown): never {
  return fail(source, 'read-failed', `cannot read ${JSON.stringify(path)}: ${messageOf(cause)}`, cause);
}

function join(a: string, b: string): string {
  return a === '' ? b : `${a}/${b}`;
}

async function probe(
  fs: WorkspaceFs,
  path: string,
): Promise<{ type: 'file' | 'directory'; size?: number; executable: boolean } | undefined> {
  if (fs.stat) return fs.stat(path);
  // A WorkspaceFs with only the normative calls: a folder lists, a file reads.
  try {
    await fs.readDir(path);
    return { type: 'directory', executable: false };
  } catch {
    try {
      await fs.readFile(path);
      return { type: 'file', executable: false };
    } catch {
      return undefined;
    }
  }
}

/**
 * Files below `rel` (relative to `top`), depth-first in name order. One generator with a stack
 * of listings, not one generator a folder: a file deep in a tree came up through every
 * generator above it, a turn of the microtask queue each (node_modules-like trees, 6,735
 * files at depth 6-10: ~50,000 resumptions a bundle).
 */
function walk(
  lister: Pick<WorkspaceFs, 'readDir'>,
  fs: WorkspaceFs,
  top: string,
  rel: string,
): AsyncGenerator<WalkedFile> {
  // A MeasureOnOpen's listing leaves files unmeasured; a WorkspaceFs's may leave them unsized.
  return walkFrom(lister, fs, lister !== fs, top, rel, objectArray());
}

/**
 * walk's loop, which starts with the loop: what runs once a walk is walk's. A call made
 * once, before the loop, has no type feedback yet when a long walk gets this optimized (V8
 * collects it only once a function has run a while), and the next walk threw that code
 * away at its first step, then compiled it again. So the top folder is listed by the same
 * call as every folder under it.
 */
async function* walkFrom(
  lister: Pick<WorkspaceFs, 'readDir'>,
  fs: WorkspaceFs,
  unmeasured: boolean,
  top: string,
  rel: string,
  stack: Listing[],
): AsyncGenerator<WalkedFile> {
  for (let next: string | undefined = rel; ; ) {
    if (next !== undefined) stack.push(await listing(lister, top, next));
    next = undefined;
    if (stack.length === 0) return;
    const folder = stack[stack.length - 1]!;
    if (folder.next === folder.entries.length) {
      stack.pop();
      continue;
    }
    const entry = folder.entries[folder.next++]!;
    const childRel = join(folder.rel, entry.name);
    if (entry.type === 'directory') next = childRel;
    else if (entry.executable !== undefined)
      yield { rel: childRel, executable: entry.executable, size: entry.size, unmeasured: false };
    else if (unmeasured) yield { rel: childRel, executable: false, size: undefined, unmeasured: true };
    else {
      const info = fs.stat ? await fs.stat(join(top, childRel)) : undefined;
      yield { rel: childRel, executable: info?.executable ?? false, size: info?.size, unmeasured: false };
    }
  }
}

interface WalkedFile {
  rel: string;
  executable: boolean;
  size: number | undefined;
  /** Listed without a `stat`: measured when opened (see unmeasuredFile). */
  unmeasured: boolean;
}

/** A folder's entries in name order, and how many of them the walk has taken. */
interface Listing {
  rel: string;
  entries: WorkspaceEntry[];
  next: number;
}

async function listing(lister: Pick<WorkspaceFs, 'readDir'>, top: string, rel: string): Promise<Listing> {
  const entries = await lister.readDir(join(top, rel));
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { rel, entries, next: 0 };
}

/**
 * minimatch, loaded by the first source with a glob: most sources name a folder or a file,
 * and a process that never matches one (the CLI's `code bundle` of a folder) does not parse
 * its ~130 KB of modules (~15 ms of start-up here).
 */
async function globMatcher(): Promise<(pattern: string) => Minimatch> {
  const { Minimatch } = await import('minimatch');
  return (pattern) => new Minimatch(pattern, { dot: true });
}

const MAGIC = /[*?[\]{}]/;

function hasMagic(path: string): boolean {
  return MAGIC.test(path);
}

/** `src/**\/*.ts` → base `src`, pattern `**\/*.ts`: the fixed folders before the first magic segment. */
function splitGlob(path: string): { base: string; pattern: string } {
  const segments = path.split('/');
  const first = segments.findIndex((s) => MAGIC.test(s));
  return { base: segments.slice(0, first).join('/'), pattern: segments.slice(first).join('/') };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
