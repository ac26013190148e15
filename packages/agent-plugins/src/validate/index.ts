import { openPluginReader } from '../read/node.js';
import type { PluginReaderOptions } from '../read/reader.js';
import { type PackageSource, type PluginValidation, loadPackageSource, verdictOf } from './core.js';
import { type LoadedPackage, loadPackageWith } from './load.js';

export type { PackageSource, PluginValidation } from './core.js';

/**
 * Loads a package as a conformant client does (loadPackageWith): the folder `source` names,
 * through openPluginReader, or a package tree or upload held in memory (loadPackageSource).
 */
export function loadPackage(source: string | PackageSource, options: PluginReaderOptions = {}): Promise<LoadedPackage> {
  if (typeof source === 'string') return loadPackageWith(openPluginReader(source, options));
  return loadPackageSource(source, { maxFileBytes: options.maxFileBytes, maxPackageBytes: options.maxPackageBytes });
}

/**
 * Validates the plugin directory `source` as a conformant client loads it (§4.1, §5, §6, §7,
 * §10.1, §11.3), reading it only through openPluginReader (`options` are its size limits).
 * `source` may also be a package held in memory: a tree (path → bytes, mode, link target)
 * or an upload read into one (readUploadedFiles, readZip, readTarGz), read by the same
 * reader with the same rules, so the findings are those of the folder it was made from:
 *
 * | Package                                             | Outcome |
 * |-----------------------------------------------------|---------|
 * | plugin.json missing, not JSON, or invalid           | rejected (AR9O0) |
 * | plugin.json, or the root, unreadable or outside     | rejected (AR9O5) |
 * | the files together over the package byte limit     | rejected (AR9O5) |
 * | mcp.json not JSON, another version, bad top level   | MCP disabled, the rest loads (AR9O2) |
 * | a server entry invalid, or its `./` command or cwd outside the root | that server skipped, an error at the entry |
 * | a `./` command with whitespace naming no file       | that server skipped: a command line, not one token |
 * | a `./` command or cwd that names nothing            | warning: the server loads and fails to start |
 * | `skills` not a folder or outside the root          | every skill off, MCP still loads |
 * | a skill breaking Agent Skills, or its SKILL.md outside | that skill skipped (AR9O1 / AR9O5) |
 * | any skill or server skipped                        | always an error finding at its own path |
 * | any other file unreadable or outside the root      | warning: access to that path is denied |
 * | a file of a known namespace folder off its layout   | warning |
 *
 * Every file of the package is read once, not only those a client uses: see loadPackage.
 * Never throws on a bad package.
 *
 * @example
 * const verdict = await validatePlugin('dist/acme.tools');
 * if (verdict.rejected || verdict.findings.some((finding) => finding.severity === 'error')) process.exitCode = 1;
 * // verdict.skills: ['review'], verdict.servers: ['acme-docs'], verdict.findings: sorted, each with a code to `explain`
 *
 * @throws Nothing for a bad, unreadable or missing package: each problem is a finding (a
 * missing folder or plugin.json rejects the package, AR9O0/AR9O5). Only a failure of the
 * host's own `options.fs` reaches the caller.
 */
export async function validatePlugin(
  source: string | PackageSource,
  options: PluginReaderOptions = {},
): Promise<PluginValidation> {
  return verdictOf(await loadPackage(source, options));
}
