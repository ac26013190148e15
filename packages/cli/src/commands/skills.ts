import { randomBytes } from 'node:crypto';
import { lstat, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { defaultCacheRoot, openContentStore } from '@agentproto/content-cache';
import { DOCUMENT_LIMITS, DocumentError, readBoundedFile } from '@agentproto/documents';
import {
  type LinkedSkill,
  type PrepareOptions,
  type PrepareProgress,
  type SkillDeclaration,
  type SkillLock,
  SkillError,
  defaultRegistry,
  gitProvider,
  linkSkills,
  loadRegistry,
  localProvider,
  lockSkills,
  parseGitString,
  parseSkillDeclarationText,
  parseSkillLockText,
  prepareSkills,
  resolveSkills,
} from '@agentproto/skill-providers';
import { CommandError } from '../command-error.js';
import { formatBytes, plural, printable, shellQuote } from '../format.js';
import { EXIT_OK, printJson } from '../io.js';
import { remoteFlags, remoteTier } from '../registry-auth.js';
import { type Invocation, flagOption, listOption, textOption } from '../table.js';
import type { Terminal } from '../terminal.js';
import { vaultFile } from '../vault.js';

/** `agentproto skills <resolve|prepare|lock> <declaration…>`, as the command table read it. */
export async function runSkills(invocation: Invocation, term: Terminal): Promise<number> {
  const { sub } = invocation;
  const json = flagOption(invocation, 'json');
  const declaration = await readDeclarations(invocation.positionals, readStdin);
  const lockPath = textOption(invocation, 'locked');
  const locked = lockPath === undefined ? undefined : await readLock(resolve(lockPath));
  const store = textOption(invocation, 'store');
  const cache = await openContentStore({
    root: store === undefined ? defaultCacheRoot() : resolve(store),
    ...(await remoteTier(`skills ${sub}`, remoteFlags(invocation), term)),
  });
  // Which providers exist is the host's decision (these flags), never the declaration's.
  const localRoots = listOption(invocation, 'local-root').map((root) => resolve(root));
  const builtins = [gitProvider(), ...(localRoots.length ? [localProvider({ roots: localRoots })] : [])];
  const packages = listOption(invocation, 'provider-package');
  const registry =
    packages.length || localRoots.length ? await loadRegistry({ providers: builtins, packages }) : defaultRegistry();
  const vault = textOption(invocation, 'vault');
  const options: PrepareOptions = {
    cache,
    registry,
    vault: vault === undefined ? () => undefined : await vaultFile(resolve(vault)),
    onProgress: (event) => progress(event, term),
    ...(locked === undefined ? {} : { locked }),
  };

  if (sub === 'lock') return writeLock(await lockSkills(declaration, options), textOption(invocation, 'out'), term);
  if (sub === 'resolve') {
    const resolved = await resolveSkills(declaration, options);
    if (json) printJson(term, resolved);
    else
      for (const skill of resolved)
        term.stdout.write(
          `${printable(`${skill.name}  ${skill.provider}  ${skill.version}  ${skill.contentId}`)}${skill.cached ? '  cached' : ''}\n`,
        );
    return EXIT_OK;
  }
  const prepared = await prepareSkills(declaration, options);
  await cache.remoteIdle(); // what was fetched reaches the registry before the command ends
  const linkInto = textOption(invocation, 'link-into');
  const linked: LinkedSkill[] | undefined =
    linkInto === undefined
      ? undefined
      : await linkSkills(prepared, resolve(linkInto), { copy: flagOption(invocation, 'copy') });
  if (json) printJson(term, linked ? prepared.map((skill, i) => ({ ...skill, linked: linked[i]!.path })) : prepared);
  else
    prepared.forEach((skill, i) => {
      const from = skill.from === 'store' ? '  (cached)' : skill.from === 'remote' ? '  (from the registry)' : '';
      const at = linked
        ? `  ${linked[i]!.kind === 'copy' ? 'copied to' : 'linked as'} ${shellQuote(linked[i]!.path)}`
        : '';
      term.stdout.write(
        `${printable(skill.name)}  ${shellQuote(skill.dir)}  ${printable(skill.version)}${from}${at}\n`,
      );
    });
  return EXIT_OK;
}

/**
 * Fetches are slow and worth seeing; they go to stderr so stdout stays the result, and not
 * at all with --json (the terminal drops them).
 */
function progress(event: PrepareProgress, term: Terminal): void {
  if (event.type === 'fetch-start') term.progress(`fetching ${event.name} at ${event.version}`);
  if (event.type === 'fetch-done')
    term.progress(`fetched ${event.name}: ${plural(event.files, 'file')}, ${formatBytes(event.bytes)}`);
}

/** The argument that reads a declaration from stdin. */
const STDIN = '-';

/**
 * Every declaration argument, in order, as one declaration. Each argument is:
 * - `-`: a declaration document (YAML or JSON, the array or `{ skills: [...] }`) on stdin (the
 *   command table lets it stand once);
 * - an existing path: a declaration file (a folder is a path error);
 * - else an inline entry: a git string (`https://…/skills.git@v1#skills/review`), which must
 *   parse as one when it reads as an address (a `scheme://` or `host:path`); anything else
 *   that names no file is the path error "file does not exist".
 * A document's entries are checked where they are read, and its errors name it.
 */
async function readDeclarations(
  args: readonly string[],
  stdin: () => Promise<Uint8Array>,
): Promise<SkillDeclaration[]> {
  const entries: SkillDeclaration[] = [];
  for (const arg of args) {
    if (arg === STDIN) {
      const bytes = await stdin();
      entries.push(...named('<stdin>', () => parseSkillDeclarationText(bytes, { source: '<stdin>' })));
      continue;
    }
    const path = resolve(arg);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isDirectory())
      throw new DeclarationPathError('CLI_PATH_NOT_A_FILE', path, 'is a folder, expected a file');
    if (info) {
      const bytes = await readDeclarationFile(arg);
      entries.push(...named(arg, () => parseSkillDeclarationText(bytes, { source: arg })));
      continue;
    }
    if (readsAsAddress(arg)) {
      parseGitString(arg); // its refusal is the entry error, masked where it may hold a credential
      entries.push(arg);
      continue;
    }
    throw new DeclarationPathError('CLI_PATH_NOT_FOUND', path, 'file does not exist');
  }
  return entries;
}

/** A declaration argument that names no file and reads as no entry: the path errors of every command. */
class DeclarationPathError extends Error {
  override readonly name = 'CliPathError';
  constructor(
    readonly code: 'CLI_PATH_NOT_FOUND' | 'CLI_PATH_NOT_A_FILE',
    /** The path as resolved from the working directory. */
    readonly path: string,
    problem: string,
  ) {
    super(`declaration ${shellQuote(path)}: ${problem}`);
  }
}

/** `scheme://…` or scp-like `[user@]host:path`: what can only be meant as a repository. */
function readsAsAddress(arg: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(arg) || /^[^/]*:/.test(arg);
}

async function readDeclarationFile(arg: string): Promise<Uint8Array> {
  try {
    return await readBoundedFile(resolve(arg), DOCUMENT_LIMITS.maxBytes, 'yaml');
  } catch (error) {
    if (error instanceof DocumentError)
      throw new CommandError(`declaration ${shellQuote(arg)} is over the ${DOCUMENT_LIMITS.maxBytes}-byte limit`, {
        cause: error,
      });
    throw new CommandError(`cannot read declaration ${shellQuote(arg)}: ${(error as NodeJS.ErrnoException).code}`, {
      cause: error,
    });
  }
}

/** Runs a parse whose errors then name the document they came from (its code and class unchanged). */
function named<T>(source: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof SkillError && !error.message.includes(source))
      Object.defineProperty(error, 'message', { value: `${source}: ${error.message}` });
    throw error;
  }
}

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > DOCUMENT_LIMITS.maxBytes)
      throw new CommandError(`the declaration on stdin is over the ${DOCUMENT_LIMITS.maxBytes}-byte limit`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readLock(path: string): Promise<SkillLock> {
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedFile(path, 4 * 1024 * 1024, 'json');
  } catch (error) {
    throw new CommandError(`cannot read the lock ${shellQuote(path)}: ${(error as NodeJS.ErrnoException).code}`, {
      cause: error,
    });
  }
  return parseSkillLockText(bytes, { source: path });
}

/** The lock on stdout, or written to `out` whole (a temporary file renamed over it). */
async function writeLock(lock: SkillLock, out: string | undefined, term: Terminal): Promise<number> {
  const text = `${JSON.stringify(lock, null, 2)}\n`;
  if (out === undefined) {
    term.stdout.write(text);
    return EXIT_OK;
  }
  const path = resolve(out);
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, text, { flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw new CommandError(`cannot write the lock ${shellQuote(path)}: ${(error as NodeJS.ErrnoException).code}`, {
      cause: error,
    });
  }
  if (term.json) printJson(term, { out: path, skills: lock.skills.length });
  else term.stdout.write(`${shellQuote(path)}: ${plural(lock.skills.length, 'skill')} locked\n`);
  return EXIT_OK;
}
