import type { InMemoryEntry } from './bundle-plan.js';
import { readArchive, type ArchiveSource, type ReadArchiveOptions } from '@agentproto/content-cache';

/**
 * Reads a gzipped tar into memory under the same rules and limits as `extractTarGz`:
 * path → contents of every regular file, sorted by the UTF-8 bytes of the path. Directories
 * are dropped (they are implied by the paths).
 */
export async function readTarGz(source: ArchiveSource, options: ReadArchiveOptions): Promise<Map<string, Buffer>> {
  const entries = await readBundleEntries(source, options);
  return new Map(entries.map((entry) => [entry.path, entry.data]));
}

/**
 * As `readTarGz`, keeping the execute bit: entries ready for `writeBundle` (a GitHub
 * directory narrowed with `stripComponents: 1` and `selectFolder`, say).
 */
export async function readBundleEntries(source: ArchiveSource, options: ReadArchiveOptions): Promise<InMemoryEntry[]> {
  const entries: { key: Buffer; entry: InMemoryEntry }[] = [];
  await readArchive(source, options, {
    async directory() {},
    async file(file, body) {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk);
      // Always a copy: a view would keep zlib's whole output chunk (headers included) alive.
      const data = Buffer.concat(chunks, file.size);
      entries.push({ key: Buffer.from(file.path), entry: { path: file.path, data, executable: file.executable } });
    },
  });
  entries.sort((a, b) => Buffer.compare(a.key, b.key));
  return entries.map(({ entry }) => entry);
}
