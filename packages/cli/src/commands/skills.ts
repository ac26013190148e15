import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultCacheRoot, openContentStore } from '@agentproto/content-cache';
import {
  type PrepareOptions,
  type PrepareProgress,
  defaultRegistry,
  gitProvider,
  loadRegistry,
  localProvider,
  prepareSkills,
  resolveSkills,
} from '@agentproto/skill-providers';
import { readYamlFile } from '../read-yaml.js';
import { CommandError } from '../command-error.js';
import { formatBytes, printable, shellQuote } from '../format.js';
import { EXIT_OK, printJson } from '../io.js';
import { REMOTE_OPTIONS, remoteTier } from '../registry-auth.js';
import type { Terminal } from '../terminal.js';
import { UsageError } from '../usage.js';
import { vaultFile } from '../vault.js';

const OPTIONS = {
  cache: { type: 'string' },
  json: { type: 'boolean', default: false },
  vault: { type: 'string' },
  'provider-package': { type: 'string', multiple: true },
  'local-root': { type: 'string', multiple: true },
  ...REMOTE_OPTIONS,
} as const;

/** `agentproto skills <resolve|prepare> <declaration.json|yaml>`; main has answered `--help`. */
export async function runSkills(args: readonly string[], term: Terminal): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'resolve' && sub !== 'prepare') {
    throw new UsageError(
      sub === undefined ? 'skills needs a subcommand: resolve or prepare' : `unknown command "skills ${sub}"`,
    );
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(`skills ${sub}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0) throw new UsageError(`skills ${sub} takes exactly one declaration file`);
  const declaration = await readDeclaration(resolve(file));
  const cache = await openContentStore({
    root: parsed.values.cache === undefined ? defaultCacheRoot() : resolve(parsed.values.cache),
    ...remoteTier(`skills ${sub}`, parsed.values, term),
  });
  // Which providers exist is the host's decision (these flags), never the declaration's.
  const localRoots = (parsed.values['local-root'] ?? []).map((root) => resolve(root));
  const builtins = [gitProvider(), ...(localRoots.length ? [localProvider({ roots: localRoots })] : [])];
  const packages = parsed.values['provider-package'] ?? [];
  const registry =
    packages.length || localRoots.length ? await loadRegistry({ providers: builtins, packages }) : defaultRegistry();
  const options: PrepareOptions = {
    cache,
    registry,
    vault: parsed.values.vault === undefined ? () => undefined : await vaultFile(resolve(parsed.values.vault)),
    onProgress: (event) => progress(event, term),
  };

  if (sub === 'resolve') {
    const resolved = await resolveSkills(declaration, options);
    if (parsed.values.json) printJson(term, resolved);
    else
      for (const skill of resolved)
        term.stdout.write(
          `${printable(`${skill.name}  ${skill.provider}  ${skill.version}  ${skill.contentId}`)}${skill.cached ? '  cached' : ''}\n`,
        );
    return EXIT_OK;
  }
  const prepared = await prepareSkills(declaration, options);
  await cache.remoteIdle(); // what was fetched reaches the registry before the command ends
  if (parsed.values.json) printJson(term, prepared);
  else
    for (const skill of prepared)
      term.stdout.write(
        `${printable(skill.name)}  ${shellQuote(skill.dir)}  ${printable(skill.version)}${skill.from === 'store' ? '  (cached)' : skill.from === 'remote' ? '  (from the registry)' : ''}\n`,
      );
  return EXIT_OK;
}

/**
 * Fetches are slow and worth seeing; they go to stderr so stdout stays the result, and not
 * at all with --json (the terminal drops them).
 */
function progress(event: PrepareProgress, term: Terminal): void {
  if (event.type === 'fetch-start') term.progress(`fetching ${event.name} at ${event.version}`);
  if (event.type === 'fetch-done')
    term.progress(`fetched ${event.name}: ${event.files} files, ${formatBytes(event.bytes)}`);
}

/** A JSON or YAML file holding the skills array, or an agent configuration with a `skills` array. */
async function readDeclaration(path: string): Promise<unknown> {
  const value = await readYamlFile(path, 'declaration');
  if (Array.isArray(value)) return value;
  if (value && typeof value === 'object' && Array.isArray((value as { skills?: unknown }).skills))
    return (value as { skills: unknown[] }).skills;
  throw new CommandError(`${shellQuote(path)} holds neither a skills array nor an object with one`, {
    hint: 'write a list of skills, or an object with a "skills" list',
  });
}
