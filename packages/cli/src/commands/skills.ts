import { resolve } from 'node:path';
import { defaultCacheRoot, openContentStore } from '@agentproto/content-cache';
import {
  type PrepareOptions,
  type PrepareProgress,
  type SkillDeclaration,
  defaultRegistry,
  gitProvider,
  loadRegistry,
  localProvider,
  prepareSkills,
  resolveSkills,
} from '@agentproto/skill-providers';
import { readYamlFile } from '../read-yaml.js';
import { CommandError } from '../command-error.js';
import { formatBytes, plural, printable, shellQuote } from '../format.js';
import { EXIT_OK, printJson } from '../io.js';
import { remoteFlags, remoteTier } from '../registry-auth.js';
import { type Invocation, flagOption, listOption, textOption } from '../table.js';
import type { Terminal } from '../terminal.js';
import { vaultFile } from '../vault.js';

/** `agentproto skills <resolve|prepare> <declaration.json|yaml>`, as the command table read it. */
export async function runSkills(invocation: Invocation, term: Terminal): Promise<number> {
  const { sub } = invocation;
  const json = flagOption(invocation, 'json');
  const declaration = await readDeclaration(resolve(invocation.positionals[0]!));
  const store = textOption(invocation, 'store');
  const cache = await openContentStore({
    root: store === undefined ? defaultCacheRoot() : resolve(store),
    ...remoteTier(`skills ${sub}`, remoteFlags(invocation), term),
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
  };

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
  if (json) printJson(term, prepared);
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
    term.progress(`fetched ${event.name}: ${plural(event.files, 'file')}, ${formatBytes(event.bytes)}`);
}

/** A JSON or YAML file holding the skills array, or an agent configuration with a `skills` array. */
// The entries are checked by the library as it reads them (SKILL_DECLARATION_INVALID), as a host's JSON is.
async function readDeclaration(path: string): Promise<readonly SkillDeclaration[]> {
  const value = await readYamlFile(path, 'declaration');
  if (Array.isArray(value)) return value as SkillDeclaration[];
  if (value && typeof value === 'object' && Array.isArray((value as { skills?: unknown }).skills))
    return (value as { skills: SkillDeclaration[] }).skills;
  throw new CommandError(`${shellQuote(path)} holds neither a skills array nor an object with one`, {
    hint: 'write a list of skills, or an object with a "skills" list',
  });
}
