import { pack } from 'tar-stream';

export interface TarEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link';
  data?: string | Buffer;
  linkname?: string;
  mode?: number;
}

/** A tar written entry by entry with tar-stream, names exactly as given (`../x` included). */
export async function tarBytes(entries: readonly TarEntry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of tar) chunks.push(chunk as Buffer);
  })();
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    const header = { name: entry.name, type, mode: entry.mode ?? (type === 'directory' ? 0o755 : 0o644), mtime: new Date(0), ...(entry.linkname ? { linkname: entry.linkname } : {}) };
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
