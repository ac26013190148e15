import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type Zippable, zipSync } from 'fflate';
import type { PackageTree, PackageTreeEntry } from '../../src/index.js';

/**
 * A folder as a package tree, the way an upload would carry it: files with their bytes and
 * permission bits, links with their targets as written, empty folders, pipes and sockets.
 */
export function folderTree(root: string): Map<string, PackageTreeEntry> {
  const tree = new Map<string, PackageTreeEntry>();
  const walk = (rel: string): void => {
    const names = readdirSync(join(root, rel));
    if (names.length === 0 && rel !== '') tree.set(rel, { type: 'directory' });
    for (const name of names) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const stats = lstatSync(join(root, path));
      if (stats.isSymbolicLink()) tree.set(path, { type: 'symlink', target: readlinkSync(join(root, path)) });
      else if (stats.isDirectory()) walk(path);
      else if (stats.isFile())
        tree.set(path, { type: 'file', bytes: readFileSync(join(root, path)), mode: stats.mode & 0o7777 });
      else tree.set(path, { type: 'special', kind: stats.isFIFO() ? 'fifo' : 'socket' });
    }
  };
  walk('');
  return tree;
}

const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/**
 * A zip of a package tree as Info-ZIP writes one on Unix: the Unix mode in each entry's
 * external attributes, a link stored with its target as its content. Pipes have no zip form.
 */
export function zipOf(tree: PackageTree, prefix = ''): Uint8Array {
  const entries: Zippable = {};
  for (const [path, entry] of tree) {
    const name = `${prefix}${path}`;
    if (entry.type === 'file')
      entries[name] = [entry.bytes, { os: 3, attrs: (S_IFREG | (entry.mode ?? 0o644)) << 16, level: 6 }];
    else if (entry.type === 'symlink')
      entries[name] = [new TextEncoder().encode(entry.target), { os: 3, attrs: (S_IFLNK | 0o777) << 16, level: 0 }];
    else if (entry.type === 'directory')
      entries[`${name}/`] = [new Uint8Array(0), { os: 3, attrs: (S_IFDIR | 0o755) << 16, level: 0 }];
    else throw new Error(`a zip cannot hold ${path}, a ${entry.kind}`);
  }
  return zipSync(entries);
}

/** The folder as GNU tar packs it: `tar -czf - .` run in it (sockets are left out, as tar does). */
export function tarGzOf(dir: string): Uint8Array {
  return execFileSync('tar', ['-C', dir, '--sort=name', '-czf', '-', '.'], {
    maxBuffer: 512 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}
