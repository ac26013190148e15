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

/** Fresh folders that go together: each test file makes its folders here and removes them all after each test. */
export interface TempDirs {
  /** The path of a fresh folder (tempDir), kept until removeAll. */
  make(prefix?: string): Promise<string>;
  /** Removes every folder made so far; the next make starts a new set. */
  removeAll(): Promise<void>;
}

/**
 * tempDir for tests that want a path and one cleanup for all: register removeAll once with the
 * test runner's afterEach (testkit itself imports no runner). `defaultPrefix` names the folders
 * when make is called without a prefix.
 */
export function tempDirs(defaultPrefix = 'testkit-'): TempDirs {
  const made: TempDir[] = [];
  return {
    make: async (prefix = defaultPrefix) => {
      const dir = await tempDir(prefix);
      made.push(dir);
      return dir.path;
    },
    removeAll: async () => {
      await Promise.all(made.splice(0).map((dir) => dir.cleanup()));
    },
  };
}
