import { constants, createReadStream } from 'node:fs';
import { copyFile, mkdir, open, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { posix } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GunzipOneMember, TarEndMarker } from '@agentproto/archive';
import { SkillError } from '@agentproto/skill-providers';
import { extract as tarExtract, type Header } from 'tar-stream';
import {
  TarballArchiveInvalidError,
  TarballPathNotFoundError,
  TarballTooLargeError,
  TarballUnsafeEntryError,
} from './errors.js';

export interface ExtractLimits {
  /** Most bytes of the tar stream once inflated, headers included: a gzip bomb stops here. */
  maxUnpackedBytes: number;
  /** Most files written. */
  maxFiles: number;
}

export interface ExtractRequest extends ExtractLimits {
  /** For messages only. */
  url: string;
  /** The verified archive on disk. */
  archive: string;
  /** The directory to take out of the archive, `/`-separated; `''` for all of it. */
  path: string;
  /** Absent: created here, and only here. */
  destination: string;
  signal: AbortSignal;
}

type Kind = 'file' | 'directory' | 'link';

/** An archive entry as tar-stream hands it over: its header and its data. */
type Entry = AsyncIterable<Uint8Array> & { header: Header };

/**
 * Extracts the entries under `path` into `destination`, relative to `path`. Every entry name
 * of the archive is checked (an archive with an absolute or `..` name anywhere is refused,
 * not only in the selected part); the entries under `path` must also be files, directories,
 * symbolic links that stay inside the selected directory, or hard links to a file extracted
 * before. Anything else stops the extraction with an error, and the caller discards the
 * destination.
 */
export async function extractSelected(request: ExtractRequest): Promise<void> {
  const { url, destination, signal } = request;
  const selected = request.path === '' ? [] : request.path.split('/');
  const layout = new Layout(url);
  let files = 0;
  let found: 'directory' | 'file' | undefined = request.path === '' ? 'directory' : undefined;

  await mkdir(destination, { mode: 0o755 });

  const extract = tarExtract();
  // What every other tar reader stops at: content after the end-of-archive marker, or in a
  // second gzip member, is seen by no reviewer who lists the archive with GNU tar, so it is
  // refused, not extracted (content-cache's safe reader does the same).
  const end = new TarEndMarker(extract);
  const meter = new ByteMeter(url, request.maxUnpackedBytes);
  // The tar stream, inflated, flows through the meter: zlib only inflates as fast as the
  // meter passes bytes on, so a small archive that inflates to terabytes stops at the limit.
  // Its failure is collected at once (not when the loop below ends): a rejection left
  // waiting would be reported as unhandled.
  const failures: unknown[] = [];
  const feeding = pipeline(createReadStream(request.archive), new GunzipOneMember(), meter, extract, { signal }).catch(
    (error: unknown) => {
      failures.push(error);
    },
  );

  const handle = async (entry: Entry): Promise<void> => {
    const { header } = entry;
    const name = header.name;
    if (end.at !== undefined) throw new TarballUnsafeEntryError(url, name, 'it comes after the end-of-archive marker');
    // Typed as a known union, but null at run time for a type flag tar-stream does not know.
    const type = (header.type as Header['type'] | null) ?? null;
    const segments = entrySegments(url, name);
    // tar-stream does not skip data after a directory header: it would read it as headers.
    if (type === 'directory' && (header.size ?? 0) > 0)
      throw new TarballArchiveInvalidError(url, `directory entry ${JSON.stringify(name)} carries data`);
    const relative = under(segments, selected);
    if (relative === undefined) return drain(entry);
    if (relative === '') {
      found = type === 'directory' ? 'directory' : 'file';
      return drain(entry);
    }
    found ??= 'directory';
    const target = join(destination, ...relative.split('/'));

    switch (type) {
      case 'directory':
        layout.place(relative, 'directory', name);
        await mkdir(target, { recursive: true, mode: 0o755 });
        return drain(entry);
      case 'file':
      case 'contiguous-file': {
        layout.place(relative, 'file', name);
        if (++files > request.maxFiles)
          throw new TarballTooLargeError(url, `more than ${request.maxFiles} files under "${request.path || '.'}"`);
        await mkdir(dirname(target), { recursive: true, mode: 0o755 });
        // Only the executable bit is kept: setuid, setgid, sticky and odd permissions from
        // the archive never reach the disk.
        return writeEntry(entry, target, ((header.mode ?? 0o644) & 0o111) !== 0 ? 0o755 : 0o644);
      }
      case 'symlink': {
        const linkname = header.linkname ?? '';
        const problem = symlinkProblem(relative, linkname);
        if (problem) throw new TarballUnsafeEntryError(url, name, problem);
        layout.place(relative, 'link', name);
        await mkdir(dirname(target), { recursive: true, mode: 0o755 });
        await symlink(linkname, target);
        return drain(entry);
      }
      case 'link': {
        // A hard link names another entry by its archive path. It becomes a copy of a file
        // already extracted under the selected directory; anything else could pull in a
        // file from outside it.
        const linkname = header.linkname ?? '';
        const from = linkname === '' ? undefined : under(entrySegments(url, linkname), selected);
        if (from === undefined || from === '' || layout.kindOf(from) !== 'file') {
          throw new TarballUnsafeEntryError(
            url,
            name,
            `a hard link to ${JSON.stringify(linkname)}, which is not a file extracted before it in the selected directory`,
          );
        }
        layout.place(relative, 'file', name);
        if (++files > request.maxFiles)
          throw new TarballTooLargeError(url, `more than ${request.maxFiles} files under "${request.path || '.'}"`);
        await mkdir(dirname(target), { recursive: true, mode: 0o755 });
        await copyFile(join(destination, ...from.split('/')), target, constants.COPYFILE_EXCL);
        return drain(entry);
      }
      default:
        throw new TarballUnsafeEntryError(
          url,
          name,
          `entry type ${type ?? 'unknown'} (devices, fifos and unknown types are never extracted)`,
        );
    }
  };

  try {
    // Entries are handled one at a time and each write is awaited in full, so when this
    // loop ends (or throws) no write is still in flight into the destination.
    // streamx types the chunks as unknown; an entry's data is Buffers.
    for await (const entry of extract) await handle(entry as unknown as Entry);
  } catch (error) {
    failures.push(error);
  }
  // Leaving the loop early destroys the extractor; the pipeline then settles too.
  await feeding;
  if (failures.length === 0) {
    try {
      end.checkTail(meter.dataEnd);
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) {
    // The same failure surfaces on both sides, and one side may only see "premature close":
    // the typed error, wherever it showed up, says what happened.
    const failure = failures.find((error) => error instanceof SkillError) ?? failures[0];
    if (signal.aborted || failure instanceof SkillError) throw failure;
    throw new TarballArchiveInvalidError(url, describe(end.explain(failure)));
  }
  if (found !== 'directory')
    throw new TarballPathNotFoundError(url, request.path, found === 'file' ? 'not a directory' : 'missing');
}

/**
 * The segments of an archive name, without `.` and empty ones. Refused: absolute names (also
 * Windows drive letters), `..` anywhere, backslashes (a separator elsewhere) and NUL.
 */
function entrySegments(url: string, name: string): string[] {
  if (name.includes('\0')) throw new TarballUnsafeEntryError(url, name, 'the name holds NUL');
  if (name.includes('\\')) throw new TarballUnsafeEntryError(url, name, 'the name holds a backslash');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new TarballUnsafeEntryError(url, name, 'an absolute name');
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new TarballUnsafeEntryError(url, name, 'the name climbs out with ".."');
  return segments;
}

/** The path below `selected`, `''` for `selected` itself, or undefined when the entry is elsewhere. */
function under(segments: readonly string[], selected: readonly string[]): string | undefined {
  if (segments.length < selected.length) return undefined;
  for (let i = 0; i < selected.length; i++) if (segments[i] !== selected[i]) return undefined;
  return segments.slice(selected.length).join('/');
}

/**
 * Why a symbolic link at `relative` pointing to `linkname` is refused, or undefined. Its
 * target is resolved against the link's own folder, which is a real folder (Layout refuses
 * any entry below a link), so the lexical result is where the link really points.
 */
function symlinkProblem(relative: string, linkname: string): string | undefined {
  if (linkname === '') return 'a symbolic link with an empty target';
  if (linkname.includes('\0') || linkname.includes('\\'))
    return 'a symbolic link whose target holds NUL or a backslash';
  if (linkname.startsWith('/') || /^[A-Za-z]:/.test(linkname))
    return `a symbolic link to the absolute path ${JSON.stringify(linkname)}`;
  const resolved = posix.normalize(posix.join(posix.dirname(relative), linkname));
  if (resolved === '..' || resolved.startsWith('../'))
    return `a symbolic link to ${JSON.stringify(linkname)}, outside the selected directory`;
  return undefined;
}

/**
 * What each extracted path is. An entry is refused when it would replace another one (a
 * second entry for a name, a file where a folder is), or sit below a file or a link: writing
 * "through" a link is how an archive that looks contained writes outside.
 */
class Layout {
  private readonly kinds = new Map<string, Kind>();

  constructor(private readonly url: string) {}

  kindOf(path: string): Kind | undefined {
    return this.kinds.get(path);
  }

  place(path: string, kind: Kind, name: string): void {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      const there = this.kinds.get(parent);
      if (there === 'file' || there === 'link')
        throw new TarballUnsafeEntryError(this.url, name, `it would be written below the ${there} "${parent}"`);
    }
    const there = this.kinds.get(path);
    if (there !== undefined && !(there === 'directory' && kind === 'directory')) {
      throw new TarballUnsafeEntryError(this.url, name, `a second entry for "${path}"`);
    }
    for (let i = 1; i < parts.length; i++) this.kinds.set(parts.slice(0, i).join('/'), 'directory');
    this.kinds.set(path, kind);
  }
}

async function writeEntry(entry: Entry, path: string, mode: number): Promise<void> {
  // `wx`: never through an existing name. The mode given to open is cut by the umask, so
  // it is set again before the first byte.
  const file = await open(path, 'wx', mode);
  try {
    await file.chmod(mode);
    for await (const chunk of entry) await file.write(chunk);
  } finally {
    await file.close();
  }
}

async function drain(entry: Entry): Promise<void> {
  for await (const _ of entry) {
    // Skipped data still counts toward the unpacked limit.
  }
}

/** Counts the inflated bytes and fails the stream past the limit; notes where the last non-zero byte was. */
class ByteMeter extends Transform {
  private total = 0;
  private trailingZeros = 0;

  /** One past the last byte that is not zero: what the end-of-archive check needs. */
  get dataEnd(): number {
    return this.total - this.trailingZeros;
  }

  constructor(
    private readonly url: string,
    private readonly max: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.total += chunk.length;
    let last = chunk.length - 1;
    while (last >= 0 && chunk[last] === 0) last--;
    this.trailingZeros = last < 0 ? this.trailingZeros + chunk.length : chunk.length - 1 - last;
    if (this.total > this.max)
      callback(new TarballTooLargeError(this.url, `more than ${this.max} bytes once unpacked`));
    else callback(null, chunk);
  }
}

function describe(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return [typeof code === 'string' ? code : undefined, typeof message === 'string' ? message : String(error)]
    .filter(Boolean)
    .join(': ');
}
