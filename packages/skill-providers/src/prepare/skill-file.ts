import { lstat } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether `dir/SKILL.md` is a regular file (a link to one does not count: the store keeps links as links). */
export async function skillFileState(dir: string): Promise<'ok' | 'missing' | 'not a regular file'> {
  try {
    return (await lstat(join(dir, 'SKILL.md'))).isFile() ? 'ok' : 'not a regular file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return 'missing';
    throw error;
  }
}
