import { lstat, readFile, readdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { isDotGit } from '@agentproto/content-cache';
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
  const walk = async (relDir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(join(root, relDir), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const rel = relDir === '' ? entry.name : posix.join(relDir, entry.name);
      if (isDotGit(entry.name)) continue;
      if (entry.isDirectory()) {
        await walk(rel);
      } else if (entry.isFile()) {
        const stat = await lstat(join(root, rel));
        paths.push(rel);
        // Only the executable bit travels: 0755 when any x bit is set, as git stores it.
        modes.set(rel, stat.mode & 0o111 ? 0o755 : 0o644);
      }
    }
  };
  await walk(under);
  paths.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return {
    paths,
    async read(path) {
      const mode = modes.get(path);
      if (mode === undefined) throw new Error(`not a file of the source tree: ${path}`);
      return { bytes: await readFile(join(root, path)), mode };
    },
  };
}
