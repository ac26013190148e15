import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  /** Absolute path of a fresh, empty folder (mode 0700, as mkdtemp makes it). */
  path: string;
  /** Removes the folder and everything in it; safe to call twice. */
  cleanup(): Promise<void>;
}

/** A fresh folder under os.tmpdir(), so parallel tests never share files. */
export async function tempDir(prefix = 'testkit-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return {
    path,
    cleanup: () => rm(path, { recursive: true, force: true }),
  };
}
