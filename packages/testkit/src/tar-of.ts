import { pack } from 'tar-stream';

/** One entry of a tar built by tarOf: its name and link target are written exactly as given. */
export interface TarOfEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'fifo';
  data?: string | Buffer;
  linkname?: string;
  /** Default 0755 for a directory, 0644 for anything else. */
  mode?: number;
}

/**
 * An uncompressed tar written entry by entry with tar-stream, names and link targets exactly
 * as given (`../x`, `.git/config`, a link out of the root included): the archives a hostile
 * sender would make, which no well-behaved writer of the SDK can.
 */
export async function tarOf(entries: readonly TarOfEntry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of tar) chunks.push(chunk as Buffer);
  })();
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    const header = {
      name: entry.name,
      type,
      mode: entry.mode ?? (type === 'directory' ? 0o755 : 0o644),
      mtime: new Date(0),
      ...(entry.linkname ? { linkname: entry.linkname } : {}),
    };
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (type === 'file') {
        const data = Buffer.from(entry.data ?? '');
        tar.entry({ ...header, size: data.length }, data, done);
      } else {
        tar.entry(header, done);
      }
    });
  }
  tar.finalize();
  await collected;
  return Buffer.concat(chunks);
}
