import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { throwIfAborted } from './abort.js';
import type { GitObjectReader } from './engine.js';
import { readVerified } from './objects.js';
import { GitLimitExceededError } from './errors.js';
import type { DirectoryEntry, WalkCap } from './select-directory.js';

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
  cap?: WalkCap,
): Promise<WrittenCounts> {
  const counts: WrittenCounts = { files: 0, symlinks: 0, bytes: 0, submodules: [] };
  const writes = new Set<Promise<void>>();
  try {
    await writeFilesAndFolders(entries, dest, reader, signal, counts, writes, cap);
  } finally {
    // Every write settles before this returns or throws: the caller removes `dest` on
    // failure, and a write still running could recreate a file in it afterwards.
    await Promise.allSettled([...writes]);
  }
  for (const entry of entries) {
    if (entry.kind !== 'symlink') continue;
    throwIfAborted(signal, 'fetchDirectory');
    await symlink(entry.target, join(dest, ...entry.path.split('/')));
    counts.symlinks += 1;
  }
  return counts;
}

const WRITES_IN_FLIGHT = 16;

/** The file created (never through an existing name), then given exactly `mode`: open's mode is cut by the umask. */
async function writeFileExactly(target: string, content: Uint8Array, mode: number): Promise<void> {
  await writeFile(target, content, { flag: 'wx', mode });
  await chmod(target, mode);
}

async function writeFilesAndFolders(
  entries: readonly DirectoryEntry[],
  dest: string,
  reader: GitObjectReader,
  signal: AbortSignal | undefined,
  counts: WrittenCounts,
  writes: Set<Promise<void>>,
  cap: WalkCap | undefined,
): Promise<void> {
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
        // Blobs are read (and hashed) one after another, in the order the reader batched
        // them; only the writes overlap, at most WRITES_IN_FLIGHT at once, so memory stays
        // bounded and a small file costs no full round trip through the thread pool.
        const content = await readVerified(reader, entry.oid, 'blob');
        // Counted before the write, so `dest` never holds a byte past the cap, whether or
        // not the engine could tell sizes before the blobs were loaded.
        if (cap !== undefined && counts.bytes + content.length > cap.maxBytes) {
          throw new GitLimitExceededError(
            'bytes',
            cap.maxBytes,
            cap.url,
            cap.path,
            `${counts.bytes + content.length} bytes by ${JSON.stringify(entry.path)}`,
          );
        }
        if (writes.size >= WRITES_IN_FLIGHT) await Promise.race(writes);
        const write = writeFileExactly(target, content, entry.mode).finally(() => writes.delete(write));
        // A failed write is reported by the Promise.all below; until then it must not be unhandled.
        write.catch(() => undefined);
        writes.add(write);
        counts.files += 1;
        counts.bytes += content.length;
        break;
      }
      case 'symlink':
        break;
    }
  }
  await Promise.all(writes);
}
