import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDotGit } from '@agentproto/archive';
import { NotInsideError, openDirInside, readFileInside } from './open-inside.js';

export interface CopyInsideOptions {
  signal?: AbortSignal;
  /**
   * Leave out `.git` entries (every spelling git refuses, see isDotGit), for a source that
   * is a git checkout: a store refuses a tree holding one. Hash the source with hashTree's
   * option of the same name, so its digest is that of what was copied.
   */
  skipDotGit?: boolean;
}

/**
 * Copies the folder `rel` of `base` (a real path) into `destination` (absent: a fill's
 * destination in the store's private staging) through descriptors proven inside `base`:
 * folders are listed through their own descriptor, files read through theirs, links copied
 * as the text they hold (the store then checks where they lead). Modes are kept exactly,
 * as a tree digest counts them. Nothing outside `base` is ever read, whatever its owner
 * swaps meanwhile; a swap met is a NotInsideError naming the path inside `base` only.
 */
export async function copyInside(
  base: string,
  rel: string,
  destination: string,
  options: CopyInsideOptions = {},
): Promise<void> {
  const folders: Array<{ from: string; to: string }> = [{ from: rel, to: destination }];
  mkdirSync(destination);
  const modes: Array<{ to: string; mode: number }> = [];
  let since = performance.now();
  while (folders.length > 0) {
    const { from, to } = folders.pop()!;
    const dir = openDirInside(base, from, { follow: from === rel });
    // Set once everything is written into it: a read-only source folder stays writable until then.
    modes.push({ to, mode: dir.stats.mode & 0o7777 });
    try {
      for (const entry of dir.entries()) {
        options.signal?.throwIfAborted();
        if (options.skipDotGit === true && isDotGit(entry.name)) continue;
        const child = from === '' ? entry.name : `${from}/${entry.name}`;
        const target = join(to, entry.name);
        if (entry.isDirectory()) {
          mkdirSync(target);
          folders.push({ from: child, to: target });
        } else if (entry.isFile()) {
          const { bytes, stats } = readFileInside(base, child, { follow: false });
          // `wx`: the destination is fresh, so nothing may already be there. The mode is the
          // source's, exactly, as the tree digest of the source counts it (the store then
          // strips what it does not keep).
          const fd = openSync(target, 'wx', 0o600);
          try {
            writeFileSync(fd, bytes);
            fchmodSync(fd, stats.mode & 0o7777);
          } finally {
            closeSync(fd);
          }
        } else if (entry.isSymbolicLink()) {
          symlinkSync(dir.readlink(entry.name), target);
        } else {
          throw new NotInsideError(child, 'special');
        }
        if (performance.now() - since > 4) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          since = performance.now();
        }
      }
    } finally {
      dir.close();
    }
  }
  for (const { to, mode } of modes.reverse()) chmodSync(to, mode);
}
