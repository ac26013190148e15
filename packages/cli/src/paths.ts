import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { shellQuote } from './format.js';
import { GROUPS, type Invocation, type PathKind } from './table.js';

type PathErrorCode = 'CLI_PATH_NOT_FOUND' | 'CLI_PATH_NOT_A_FOLDER' | 'CLI_PATH_NOT_A_FILE';

/** A path on the command line is not what the command needs: missing, or a file for a folder, or the reverse. */
class CliPathError extends Error {
  override readonly name = 'CliPathError';
  readonly code: PathErrorCode;
  /** The path as resolved from the working directory. */
  readonly path: string;
  constructor(code: PathErrorCode, path: string, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = path;
  }
}

/**
 * Checks every path argument of a command line the way the table describes it, before the
 * command's code is loaded: a file or folder that must exist, or one to create whose parent
 * must be a folder. `what` names it in the message: `manifest`, `--out`.
 */
export async function checkPaths(invocation: Invocation): Promise<void> {
  const group = GROUPS[invocation.group]!;
  const spec = group.subcommands[invocation.sub]!;
  for (const [i, positional] of spec.positionals.entries()) {
    // A variadic last positional is every argument from its place on.
    const values = positional.variadic ? invocation.positionals.slice(i) : invocation.positionals.slice(i, i + 1);
    if (positional.path !== undefined)
      for (const value of values) await checkPath(value, positional.path, positional.name);
  }
  for (const name of spec.options) {
    const kind = group.options[name]!.path;
    const value = invocation.values[name];
    if (kind === undefined || value === undefined || value === true) continue;
    for (const path of [value].flat()) await checkPath(path, kind, `--${name}`);
  }
}

/** One path against what it must be; a relative path is taken from the working directory. */
async function checkPath(path: string, kind: PathKind, what: string): Promise<void> {
  const absolute = resolve(path);
  const where = `${what} ${shellQuote(absolute)}`;
  const info = await stat(absolute).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
  const wantsFolder = kind === 'folder' || kind === 'new-folder' || kind === 'store';
  if (kind === 'store' && info !== undefined) return;
  if (info === undefined) {
    if (kind === 'file' || kind === 'folder')
      throw new CliPathError(
        'CLI_PATH_NOT_FOUND',
        absolute,
        `${where}: ${wantsFolder ? 'folder' : 'file'} does not exist`,
      );
    // A file is written into its folder, which must exist; a folder is made with its
    // missing parents, under a nearest existing one that must be a folder.
    let parent = dirname(absolute);
    let parentInfo = await stat(parent).catch(() => undefined);
    if (kind === 'new-file' && parentInfo === undefined)
      throw new CliPathError('CLI_PATH_NOT_FOUND', parent, `${where}: its folder ${shellQuote(parent)} does not exist`);
    while (parentInfo === undefined && dirname(parent) !== parent) {
      parent = dirname(parent);
      parentInfo = await stat(parent).catch(() => undefined);
    }
    if (parentInfo !== undefined && !parentInfo.isDirectory())
      throw new CliPathError(
        'CLI_PATH_NOT_A_FOLDER',
        parent,
        `${where}: ${shellQuote(parent)} is a file, expected a folder`,
      );
    return;
  }
  if (wantsFolder && !info.isDirectory())
    throw new CliPathError('CLI_PATH_NOT_A_FOLDER', absolute, `${where}: is a file, expected a folder`);
  if (!wantsFolder && info.isDirectory())
    throw new CliPathError('CLI_PATH_NOT_A_FILE', absolute, `${where}: is a folder, expected a file`);
}
