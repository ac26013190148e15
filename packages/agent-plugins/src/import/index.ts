// importPlugin over a folder or a package held in memory; the import itself is core.ts.
import type { PluginReaderOptions } from '../read/reader.js';
import type { PackageSource } from '../validate/core.js';
import { loadPackage } from '../validate/index.js';
import { type ImportedPlugin, importLoaded } from './core.js';

export type { ImportedPlugin, ImportReportEntry } from './core.js';

/**
 * Reads the plugin directory `source` back into a configuration and a content root (the seed's
 * "Import"): building `config` from `content` gives the package again, byte for byte when it
 * was built by buildPlugin. `source` may also be a package held in memory (a tree, or an
 * upload read by readZip, readTarGz or readUploadedFiles), so a web product can show what an
 * import would produce before anything is written. Exactly what a conformant client loads is imported (the same
 * loader as validatePlugin, so both reach the same verdict); anything else is reported.
 *
 * | Package                         | Imported as |
 * |---------------------------------|-------------|
 * | plugin.json                     | name, version, description, homepage, repository, license, keywords, author, presentation (1.1.0), extensions (the data, unchanged); `spec` when not 1.0.0 |
 * | skills/<name>/…                 | content `skills/<name>/…`, SKILL.md without its provenance header |
 * | mcp.json                        | config.mcp: stdio `{ name, command, args, env, cwd }`, streamable-http `transport: 'http'`, sse `transport: 'sse'` |
 * | a bundled root file             | content, and one literal glob in config.include; reported |
 * | a namespace folder file         | content and config.include; unknown namespaces, hooks/hooks.json, … reported |
 * | the sidecar                     | nothing: a build writes it again |
 *
 * Decisions:
 * - A manifest without version or description still gives a configuration: PluginConfig does
 *   not require them and a build writes a manifest without them. The seed's `[plugin]` block
 *   needs both, so a report entry on plugin.json says no such block can be formed from it.
 * - A rejected plugin gives no configuration: a client loads nothing of it, so there is
 *   nothing a configuration could describe (`rejected` is true, `config` undefined).
 * - A server cwd is carried in config.mcp (McpServerConfig has it) and also reported, since a
 *   project-wide server configuration has no working directory.
 * - `provenanceHeaders: false` is set when no loaded SKILL.md has a header, so the build does
 *   not add one; a skill without a header among skills with one is reported.
 * - An included file is listed by a glob that matches its own path: minimatch.escape, and `?`
 *   for a brace, which the escape does not protect from brace expansion. A `?` may match
 *   another file as well; every file outside skills/ in `content` is meant to be included, so
 *   that changes nothing.
 */
export async function importPlugin(
  source: string | PackageSource,
  options: PluginReaderOptions = {},
): Promise<ImportedPlugin> {
  return importLoaded(await loadPackage(source, options));
}
