import { readBundleEntries } from '../tar/index.js';
import type { BundleEntry } from '../tar/bundle-plan.js';
import { type SinkFactory, memorySink, writeBundleTo } from '../tar/write-bundle.js';
import { type BundleFile, isUnmeasured } from './overlay.js';

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
  return (await buildArchiveTo(files, false, memorySink)).output;
}

/**
 * The deterministic tar.gz of the merged bundle into the sink `makeSink` gives, and its
 * SHA-256 (hashed as it is written) when `digest` is true.
 */
export function buildArchiveTo<T>(
  files: ReadonlyMap<string, BundleFile>,
  digest: boolean,
  makeSink: SinkFactory<T>,
): Promise<{ output: T; sha256: string | undefined }> {
  return writeBundleTo(
    [...files].map(([path, file]) => bundleEntryOf(path, file)),
    {},
    digest,
    makeSink,
  );
}

/** A merged file as the archive writer takes it (measured: see Overlay.measureAll). */
export function bundleEntryOf(path: string, file: BundleFile): BundleEntry {
  if (isUnmeasured(file)) throw new Error(`${JSON.stringify(path)} was not measured before the archive was planned`);
  return 'data' in file
    ? { path, data: file.data, executable: file.executable }
    : { path, size: file.size, read: file.read, readInto: file.readInto, executable: file.executable };
}
