import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack, type Header } from 'tar-stream';

/** One archive entry: a file by default; `body` only for files. */
export interface TarEntry {
  name: string;
  type?: Header['type'];
  body?: string | Uint8Array;
  /** A file's declared size when no body is given: its data is that many zero bytes. */
  zeros?: number;
  linkname?: string;
  mode?: number;
}

export interface TarOptions {
  /** Zero bytes written after the tar's end-of-archive marker, inside the gzip stream. */
  trailingZeros?: number;
  /** The plain tar, not gzipped. */
  uncompressed?: boolean;
}

/** A real tar written by tar-stream, gzipped by zlib, as a packager would make it (or as an attacker would). */
export async function tarGz(entries: readonly TarEntry[], options: TarOptions = {}): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of archive) chunks.push(chunk as Buffer);
  })();
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    const header = {
      name: entry.name,
      type,
      mode: entry.mode ?? (type === 'directory' ? 0o755 : 0o644),
      ...(entry.linkname !== undefined ? { linkname: entry.linkname } : {}),
      ...(type === 'character-device' || type === 'block-device' ? { devmajor: 1, devminor: 3 } : {}),
    };
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (type === 'file')
        archive.entry(header, entry.zeros !== undefined ? Buffer.alloc(entry.zeros) : (entry.body ?? ''), done);
      else archive.entry(header, done);
    });
  }
  archive.finalize();
  await collected;
  const tar = Buffer.concat([...chunks, Buffer.alloc(options.trailingZeros ?? 0)]);
  return options.uncompressed ? tar : gzipSync(tar);
}

/** Every file and folder under `dir` as entries, paths prefixed with `prefix`. */
export async function entriesOf(dir: string, prefix = ''): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  for (const dirent of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, dirent.name);
    const name = `${prefix}${dirent.name}`;
    if (dirent.isDirectory()) {
      entries.push({ name: `${name}/`, type: 'directory' }, ...(await entriesOf(path, `${name}/`)));
    } else {
      entries.push({ name, body: await readFile(path), mode: (await stat(path)).mode & 0o777 });
    }
  }
  return entries;
}
