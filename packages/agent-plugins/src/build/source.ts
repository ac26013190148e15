import { posix } from 'node:path';
import { isDotGit } from '@agentproto/archive';
import { openDirInside, readFileInside, realRootOf } from '@agentproto/fs-inside';
import type { PackageFile } from '../bundle/include.js';

/**
 * The files of a source tree (the content root), by `/`-separated path. Only regular files
 * count; links are not followed (a source tree that links out of itself must not ship what
 * it links to), and `.git` folders and gitfiles are skipped in every spelling git itself
 * refuses (`.GIT`, `git~1`, `.git.`, …): another repository's configuration is never shipped.
 * Files are read when asked for.
 */
export interface SourceTree {
  paths: string[];
  read(path: string): Promise<PackageFile>;
}

export async function readSourceTree(root: string, under = ''): Promise<SourceTree> {
  const paths: string[] = [];
  const modes = new Map<string, 0o644 | 0o755>();
  let realRoot: string;
  try {
    realRoot = realRootOf(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { paths, read: notInTree };
    throw error;
  }
  // Folders are listed, and files measured and read, through descriptors proven inside the
  // root (content-cache openInside): whoever can write the source tree cannot swap a folder
  // for a link between a check and a read and ship a file from outside it.
  const walk = (relDir: string): void => {
    let dir;
    try {
      dir = openDirInside(realRoot, relDir, { follow: relDir === under });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (relDir === under && (code === 'ENOENT' || code === 'ENOTDIR')) return;
      throw error;
    }
    try {
      for (const entry of dir.entries()) {
        const rel = relDir === '' ? entry.name : posix.join(relDir, entry.name);
        if (isDotGit(entry.name)) continue;
        if (entry.isDirectory()) {
          walk(rel);
        } else if (entry.isFile()) {
          const stat = dir.lstat(entry.name);
          if (!stat?.isFile()) continue;
          paths.push(rel);
          // Only the executable bit travels: 0755 when any x bit is set, as git stores it.
          modes.set(rel, stat.mode & 0o111 ? 0o755 : 0o644);
        }
      }
    } finally {
      dir.close();
    }
  };
  walk(under);
  paths.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return {
    paths,
    async read(path) {
      const mode = modes.get(path);
      if (mode === undefined) return notInTree(path);
      return { bytes: readFileInside(realRoot, path, { follow: false }).bytes, mode };
    },
  };
}

function notInTree(path: string): never {
  throw new Error(`not a file of the source tree: ${path}`);
}
