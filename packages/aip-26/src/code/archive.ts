import { readBundleEntries } from '../tar/index.js';
import type { BundleEntry } from '../tar/bundle-plan.js';
import { writeBundleDigested } from '../tar/write-bundle.js';
import type { BundleFile } from './overlay.js';

/**
 * Reads a fetched tar.gz with every archive rule applied (no links, devices, traversal or
 * bombs). The tar stream's own limit includes headers and padding, so it gets headroom;
 * the overlay enforces the bundle's exact limit as files are added.
 */
export async function readArchive(
  archive: Buffer,
  limits: { bytes: number; files: number },
): Promise<Map<string, { data: Buffer; executable: boolean }>> {
  const entries = await readBundleEntries(archive, {
    // Headers, folder entries, pax names and end padding: up to ~2 KiB a file, plus a tail.
    maxBytes: Math.max(0, limits.bytes) + limits.files * 2048 + 16 * 1024,
    maxFiles: limits.files,
  });
  return new Map(entries.map((entry) => [entry.path, { data: entry.data, executable: entry.executable === true }]));
}

/** The deterministic tar.gz of the merged bundle. */
export async function buildArchive(files: ReadonlyMap<string, BundleFile>): Promise<Buffer> {
  return (await buildArchiveDigested(files, false)).bundle;
}

/** The deterministic tar.gz of the merged bundle, and its SHA-256 (hashed as it is written) when `digest` is true. */
export function buildArchiveDigested(
  files: ReadonlyMap<string, BundleFile>,
  digest: boolean,
): Promise<{ bundle: Buffer; sha256: string | undefined }> {
  return writeBundleDigested(
    [...files].map(([path, file]) => bundleEntryOf(path, file)),
    {},
    digest,
  );
}

/** A merged file as the archive writer takes it. */
export function bundleEntryOf(path: string, file: BundleFile): BundleEntry {
  return 'data' in file
    ? { path, data: file.data, executable: file.executable }
    : { path, size: file.size, read: file.read, readInto: file.readInto, executable: file.executable };
}
