import { createCipheriv, createHash } from 'node:crypto';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FileTree } from './file-tree.js';
import { fileEntry } from './file-tree.js';

export interface GenerateTreeOptions {
  /** How many files. */
  files: number;
  /** Smallest file size in bytes (inclusive); 1024 by default. */
  minBytes?: number;
  /** Largest file size in bytes (inclusive); 65536 by default. */
  maxBytes?: number;
  /** Same seed, same tree: names, sizes and bytes. 1 by default. */
  seed?: number;
  /** Folder levels above each file; 2 by default (`d03/d17/f00042.bin`). */
  depth?: number;
  /** Folders per level; 20 by default. */
  fanout?: number;
  /** Folder the whole tree is placed under, e.g. `skills/big`; none by default. */
  prefix?: string;
}

/**
 * A large deterministic tree for benchmarks: `files` files of pseudo-random, incompressible
 * bytes spread over nested folders. Names and sizes come from a seeded PRNG (mulberry32);
 * contents from AES-128-CTR keyed by the seed, which is deterministic on every platform and
 * fast enough to make hundreds of megabytes in about a second.
 */
export function generateTree(options: GenerateTreeOptions): Record<string, Buffer> {
  const { files, minBytes = 1024, maxBytes = 65536, seed = 1, depth = 2, fanout = 20 } = options;
  if (!Number.isInteger(files) || files < 0) throw new RangeError('files must be a non-negative integer');
  if (minBytes < 0 || maxBytes < minBytes) throw new RangeError('need 0 <= minBytes <= maxBytes');
  const random = mulberry32(seed);
  const key = createHash('sha256').update(`testkit-tree:${seed}`).digest().subarray(0, 16);
  const dirWidth = Math.max(2, String(fanout - 1).length);
  const fileWidth = Math.max(5, String(files - 1).length);
  const prefix = options.prefix ? `${options.prefix.replace(/\/+$/, '')}/` : '';
  const tree: Record<string, Buffer> = {};
  for (let index = 0; index < files; index += 1) {
    const folders = Array.from(
      { length: depth },
      () => `d${String(Math.floor(random() * fanout)).padStart(dirWidth, '0')}`,
    );
    const size = minBytes + Math.floor(random() * (maxBytes - minBytes + 1));
    const name = [...folders, `f${String(index).padStart(fileWidth, '0')}.bin`].join('/');
    tree[prefix + name] = keystream(key, index, size);
  }
  return tree;
}

/** Writes a tree (as makeRepo takes it) into `dir`: folders, modes and symlinks included. */
export async function writeTree(dir: string, tree: FileTree): Promise<void> {
  const paths = Object.keys(tree);
  const folders = new Set(paths.map((path) => dirname(join(dir, path))));
  for (const folder of folders) await mkdir(folder, { recursive: true });
  // Bounded parallelism: fast on big trees without running out of file descriptors.
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      await writeOne(join(dir, path), tree[path]!);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

async function writeOne(target: string, value: FileTree[string]): Promise<void> {
  const entry = fileEntry(value);
  if (entry.kind === 'symlink') {
    await symlink(entry.target, target);
    return;
  }
  await writeFile(target, entry.content);
  if (entry.executable) await chmod(target, 0o755);
}

// Counter mode: the file index is the IV, so each file's bytes do not depend on the others.
function keystream(key: Buffer, index: number, size: number): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(index >>> 0, 0);
  const cipher = createCipheriv('aes-128-ctr', key, iv);
  return cipher.update(Buffer.alloc(size));
}

/** mulberry32: tiny, well-distributed 32-bit PRNG; returns floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
