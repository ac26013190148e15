import { lstat, mkdir, readFile, readdir, readlink, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { pack as tarPack } from 'tar-stream';
import {
  ArchiveError,
  type ArchiveFile,
  type ArchiveVisitor,
  type ReadArchiveOptions,
  readArchive,
  sortInArchiveOrder,
} from '@agentproto/archive';
import { RegistryError } from './errors.js';
import type { Descriptor, OciClient } from './oci-client.js';

export const LAYER_TAR_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';

export interface LayerOptions {
  /** zlib level for the layer, 0-9. Default 6. */
  gzipLevel?: number;
}

interface LayerEntry {
  path: string;
  kind: 'directory' | 'file' | 'symlink';
  executable?: boolean;
  target?: string;
}

/**
 * A tree as a deterministic tar.gz layer: entries in the order of GNU tar `--sort=name`
 * (`sortInArchiveOrder`, the one order of every archive agentproto writes), folders 0755,
 * files 0644 or 0755, links kept as links, every time and owner zero. The same tree gives
 * the same bytes (with the same zlib), so two machines that push one object push one blob.
 */
export async function packTree(root: string, options: LayerOptions = {}): Promise<Buffer> {
  const entries = await listTree(root);
  // tar-stream loads here, at the first layer packed: importing the package (as the content
  // store does for its remote tier) loads none of it.
  const pack = (await import('tar-stream')).pack();
  const gzip = createGzip({ level: options.gzipLevel ?? 6 });
  const chunks: Buffer[] = [];
  const collected = pipeline(pack, gzip, async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) chunks.push(chunk);
  });
  const common = { mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' };
  try {
    for (const entry of entries) {
      if (entry.kind === 'directory') {
        await addEntry(pack, { ...common, name: `${entry.path}/`, type: 'directory', mode: 0o755 });
      } else if (entry.kind === 'symlink') {
        await addEntry(pack, { ...common, name: entry.path, type: 'symlink', linkname: entry.target!, mode: 0o777 });
      } else {
        const data = await readFile(join(root, entry.path));
        await addEntry(
          pack,
          { ...common, name: entry.path, type: 'file', mode: entry.executable ? 0o755 : 0o644, size: data.length },
          data,
        );
      }
    }
    pack.finalize();
  } catch (error) {
    pack.destroy(error as Error);
  }
  await collected;
  return Buffer.concat(chunks);
}

function addEntry(
  pack: ReturnType<typeof tarPack>,
  header: Parameters<ReturnType<typeof tarPack>['entry']>[0],
  data?: Buffer,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const callback = (error?: Error | null) => (error ? reject(error) : resolve());
    if (data) pack.entry(header, data, callback);
    else pack.entry(header, callback);
  });
}

async function listTree(root: string): Promise<LayerEntry[]> {
  const entries: LayerEntry[] = [];
  const walk = async (rel: string): Promise<void> => {
    const abs = rel === '' ? root : join(root, rel);
    for (const dirent of await readdir(abs, { withFileTypes: true })) {
      const childRel = rel === '' ? dirent.name : `${rel}/${dirent.name}`;
      if (dirent.isDirectory()) {
        entries.push({ path: childRel, kind: 'directory' });
        await walk(childRel);
      } else if (dirent.isSymbolicLink()) {
        entries.push({ path: childRel, kind: 'symlink', target: await readlink(join(abs, dirent.name)) });
      } else if (dirent.isFile()) {
        const stat = await lstat(join(abs, dirent.name));
        entries.push({ path: childRel, kind: 'file', executable: (stat.mode & 0o111) !== 0 });
      }
    }
  };
  await walk('');
  return sortInArchiveOrder(entries, (entry) => (entry.kind === 'directory' ? `${entry.path}/` : entry.path));
}

export interface UnpackTarget {
  /** Writes one file (relative, `/`-separated path) under the destination. */
  writeFile(path: string, data: Uint8Array, options: { mode: number }): Promise<void>;
}

/**
 * Streams a layer blob from the registry through the safe tar reader into `visitor`, the
 * blob's digest checked at its end. The reader cannot close the download: when it refuses
 * the archive, the rest is still read (never more than the descriptor's size) and checked,
 * so a damaged or tampered blob is reported as REGISTRY_DIGEST_MISMATCH, what it is, rather
 * than as the malformed archive it looks like.
 */
export async function readLayerBlob(
  client: OciClient,
  layer: Descriptor,
  options: Omit<ReadArchiveOptions, 'uncompressed'>,
  visitor: ArchiveVisitor,
  signal?: AbortSignal,
): Promise<void> {
  const download = client.streamBlob(layer.digest, layer.size, signal);
  const view: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: () => ({ next: () => download.next() }) };
  try {
    await readArchive(view, { ...options, uncompressed: layer.mediaType === LAYER_TAR }, visitor);
  } catch (error) {
    if (error instanceof ArchiveError) await drainChecked(download);
    throw error;
  } finally {
    await download.return(undefined).catch(() => undefined);
  }
}

/** Reads what is left of a blob so its digest is checked; a mismatch replaces the error at hand, anything else does not. */
async function drainChecked(download: AsyncGenerator<Buffer>): Promise<void> {
  try {
    for (let step = await download.next(); !step.done; step = await download.next()) {
      // Discarded: only the digest check at the end matters now.
    }
  } catch (error) {
    if (error instanceof RegistryError && error.code === 'REGISTRY_DIGEST_MISMATCH') throw error;
  }
}

/**
 * Reads a store object's layer into `destination` (which must not exist) under every rule
 * of `readArchive`: no `..` or absolute names, no hard links, devices or FIFOs, no
 * duplicates, limits counted while inflating. Symbolic links are taken only when their
 * target is relative and stays inside; the store's sealing then follows each one before
 * anything is published.
 */
export async function unpackLayer(
  client: OciClient,
  layer: Descriptor,
  destination: string,
  target: UnpackTarget,
  limits: Pick<ReadArchiveOptions, 'maxBytes' | 'maxFiles' | 'maxEntryBytes'>,
  signal?: AbortSignal,
): Promise<void> {
  await mkdir(destination);
  await readLayerBlob(
    client,
    layer,
    { ...limits, links: 'inside' },
    {
      async directory(path) {
        await mkdir(join(destination, path), { recursive: true });
      },
      async file(file: ArchiveFile, body) {
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(chunk);
        await target.writeFile(file.path, Buffer.concat(chunks), { mode: file.executable ? 0o755 : 0o644 });
      },
      async link(path, linkTarget) {
        await mkdir(dirname(join(destination, path)), { recursive: true });
        await symlink(linkTarget, join(destination, path));
      },
    },
    signal,
  );
}
