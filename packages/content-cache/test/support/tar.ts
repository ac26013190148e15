import { pack } from 'tar-stream';

export interface TarEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'fifo';
  data?: string;
  linkname?: string;
}

/**
 * A tar written entry by entry with tar-stream, names and link targets exactly as given
 * (`../x`, `.git/config` included): the archives a hostile sender would make.
 */
export async function tarOf(entries: readonly TarEntry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of tar) chunks.push(chunk as Buffer);
  })();
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      const header = { name: entry.name, type, mode: 0o644, mtime: new Date(0), ...(entry.linkname ? { linkname: entry.linkname } : {}) };
      if (type === 'file') tar.entry({ ...header, size: Buffer.byteLength(entry.data ?? '') }, entry.data ?? '', done);
      else tar.entry(header, done);
    });
  }
  tar.finalize();
  await collected;
  return Buffer.concat(chunks);
}
