import { nodeCrypto } from '#libraries';
import { chmod, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isDotGit } from '@agentproto/archive';
import type { PackageFile } from '../bundle/include.js';

export interface WritePluginOptions {
  /** Replace an existing, non-empty `outDir`; refused by default. */
  replace?: boolean;
}

/** The package folder could not be written; names the folder and the step. */
export class PluginWriteError extends Error {
  override name = 'PluginWriteError';
  readonly code = 'PLUGIN_WRITE_FAILED';
  constructor(
    readonly dir: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${dir}: ${reason}`, options);
  }
}

/**
 * Writes a package to `outDir`: every file with its mode, nothing else. The files go into a
 * fresh folder beside `outDir` first, which is then renamed into place, so a reader of
 * `outDir` sees the old package or the whole new one, never a half-written mix. An existing
 * non-empty `outDir` is kept unless `replace`; then it is renamed away and removed after.
 */
export async function writePlugin(
  files: ReadonlyMap<string, PackageFile>,
  outDir: string,
  options: WritePluginOptions = {},
): Promise<void> {
  const target = resolve(outDir);
  const existing = await readdir(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new PluginWriteError(target, 'cannot be read', { cause: error });
  });
  if (existing && existing.length > 0 && !options.replace)
    throw new PluginWriteError(target, 'exists and is not empty (pass replace to overwrite it)');
  // Every path is checked before the first byte is written anywhere.
  for (const path of files.keys()) checkedPath(path, target);
  await mkdir(dirname(target), { recursive: true });
  const staging = join(dirname(target), `.${basename(target)}.tmp-${nodeCrypto().randomBytes(6).toString('hex')}`);
  try {
    await mkdir(staging, { mode: 0o755 });
    for (const [path, file] of files) {
      const abs = join(staging, ...checkedPath(path, target).split('/'));
      await mkdir(dirname(abs), { recursive: true });
      await writeFile(abs, file.bytes, { flag: 'wx' });
      // Exactly 0644 or 0755, whatever the umask made of it.
      await chmod(abs, file.mode);
    }
    if (existing) {
      const old = `${staging}-old`;
      await rename(target, old);
      await rename(staging, target);
      await rm(old, { recursive: true, force: true });
    } else {
      await rename(staging, target);
    }
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error instanceof PluginWriteError || error instanceof PluginGitPathError
      ? error
      : new PluginWriteError(target, 'could not be written', { cause: error });
  }
}

/**
 * A package path as built: relative, `/`-separated, without `.`, `..` or empty segments, and
 * without a `.git` segment in any spelling git refuses: the last guard before the disk, so
 * no build, import or emit can write another repository's configuration into a folder.
 */
function checkedPath(path: string, dir: string): string {
  const parts = path.split('/');
  if (
    path === '' ||
    path.startsWith('/') ||
    path.includes('\\') ||
    path.includes('\0') ||
    parts.some((part) => part === '' || part === '.' || part === '..')
  ) {
    throw new PluginWriteError(dir, `refuses the package path ${JSON.stringify(path.slice(0, 200))}`);
  }
  if (parts.some(isDotGit)) throw new PluginGitPathError(dir, path);
  return path;
}

/** writePlugin was handed a `.git` path (any spelling git refuses); nothing was written. */
export class PluginGitPathError extends Error {
  override name = 'PluginGitPathError';
  readonly code = 'PLUGIN_GIT_PATH';
  constructor(
    readonly dir: string,
    readonly path: string,
  ) {
    super(
      `${dir}: refuses the package path ${JSON.stringify(path.slice(0, 200))}: a .git entry (in a spelling git itself refuses) is never written`,
    );
  }
}
