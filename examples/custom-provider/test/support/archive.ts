import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { pack, type Header } from 'tar-stream';

/** One archive entry: a file by default; `body` only for files. */
export interface TarEntry {
  name: string;
  type?: Header['type'];
  body?: string | Uint8Array;
  linkname?: string;
  mode?: number;
}

/** A real .tar.gz, written by tar-stream and gzipped by zlib, as a publisher would make it. */
export async function tarGz(entries: readonly TarEntry[]): Promise<Buffer> {
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
      ...(type === 'character-device' ? { devmajor: 1, devminor: 3 } : {}),
    };
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (type === 'file') archive.entry(header, entry.body ?? '', done);
      else archive.entry(header, done);
    });
  }
  archive.finalize();
  await collected;
  return gzipSync(Buffer.concat(chunks));
}

/** The pin a declaration states for these bytes. */
export function pinOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A skill folder's files under `root`, plus a neighbour that must not be extracted. */
export function skillPack(root = 'skills/review'): TarEntry[] {
  return [
    { name: 'skills/', type: 'directory' },
    { name: `${root}/`, type: 'directory' },
    { name: `${root}/SKILL.md`, body: '---\nname: review\n---\n# Review\n' },
    { name: `${root}/scripts/check.sh`, body: '#!/bin/sh\necho ok\n', mode: 0o755 },
    { name: 'skills/other/SKILL.md', body: '# Other\n' },
  ];
}
