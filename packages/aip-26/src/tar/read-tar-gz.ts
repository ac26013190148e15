import type { InMemoryEntry } from './bundle-plan.js';
import { readArchive, sortInArchiveOrder, type ArchiveSource, type ReadArchiveOptions } from '@agentproto/archive';

/**
 * Reads a gzipped tar into memory under the same rules and limits as `extractTarGz`:
 * path → contents of every regular file, in the order `writeBundle` writes them (GNU tar
 * `--sort=name`), whatever the archive's own order. Directories are dropped (they are
 * implied by the paths).
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
  const entries: InMemoryEntry[] = [];
  await readArchive(source, options, {
    async directory() {},
    async file(file, body) {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk);
      // Always a copy: a view would keep zlib's whole output chunk (headers included) alive.
      const data = Buffer.concat(chunks, file.size);
      entries.push({ path: file.path, data, executable: file.executable });
    },
  });
  return sortInArchiveOrder(entries, (entry) => entry.path);
}
