import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { throwIfAborted } from './abort.js';
import type { GitObjectReader } from './engine.js';
import { readVerified } from './objects.js';
import type { DirectoryEntry } from './select-directory.js';

export interface WrittenCounts {
  files: number;
  symlinks: number;
  bytes: number;
  submodules: Array<{ path: string; commit: string }>;
}

/**
 * Writes checked entries into `dest`, an empty folder this operation created.
 *
 * Symlinks are made last: then no file or folder is ever written through a link we made,
 * so even a link the checks got wrong could not redirect a write. Files are opened with
 * `wx` (never through an existing name) and chmod-ed after, since the mode given to open
 * is cut by the umask and 0755 must stay 0755.
 */
export async function writeEntries(
  entries: readonly DirectoryEntry[],
  dest: string,
  reader: GitObjectReader,
  signal: AbortSignal | undefined,
): Promise<WrittenCounts> {
  const counts: WrittenCounts = { files: 0, symlinks: 0, bytes: 0, submodules: [] };
  for (const entry of entries) {
    throwIfAborted(signal, 'fetchDirectory');
    const target = join(dest, ...entry.path.split('/'));
    switch (entry.kind) {
      case 'directory':
        await mkdir(target);
        break;
      case 'submodule':
        // As `git clone` without --recurse-submodules and `git archive` do: an empty folder.
        await mkdir(target);
        counts.submodules.push({ path: entry.path, commit: entry.commit });
        break;
      case 'file': {
        const content = await readVerified(reader, entry.oid, 'blob');
        await writeFile(target, content, { flag: 'wx', mode: entry.mode });
        await chmod(target, entry.mode);
        counts.files += 1;
        counts.bytes += content.length;
        break;
      }
      case 'symlink':
        break;
    }
  }
  for (const entry of entries) {
    if (entry.kind !== 'symlink') continue;
    throwIfAborted(signal, 'fetchDirectory');
    await symlink(entry.target, join(dest, ...entry.path.split('/')));
    counts.symlinks += 1;
  }
  return counts;
}
