import type { Finding } from '../findings.js';
import type { PluginReaderOptions } from '../read/index.js';
import type { SpecVersion } from '../schemas.js';
import { loadPackage } from './load.js';
export { loadPackage } from './load.js';

/** What validatePlugin found: whether a client loads the plugin, and which skills and servers it would use. */
export interface PluginValidation {
  /** The version plugin.json targets; undefined when it names none this package supports. */
  spec: SpecVersion | undefined;
  /** True when a conformant client loads nothing of the plugin. */
  rejected: boolean;
  /** Sorted with sortFindings. */
  findings: Finding[];
  /** The skills a client loads, in byte order. Empty when rejected. */
  skills: string[];
  /** The MCP servers a client loads, in code-point order. Empty when rejected or MCP is disabled. */
  servers: string[];
  /** True when mcp.json is present and a client disables MCP for the plugin (§7.2.2); false when rejected. */
  mcpDisabled: boolean;
  /** Discovered skills a client skips, in byte order; each has an error finding at `skills/<name>/…`. Empty when rejected. */
  skippedSkills: string[];
  /** Entries of mcpServers a client skips, in byte order; each has an error finding at `mcp.json#/mcpServers/<name>…`. Empty when rejected or MCP is disabled. */
  skippedServers: string[];
}

/**
 * Validates the plugin directory `dir` as a conformant client loads it (§4.1, §5, §6, §7,
 * §10.1, §11.3), reading it only through openPluginReader (`options` are its size limits):
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
export async function validatePlugin(dir: string, options: PluginReaderOptions = {}): Promise<PluginValidation> {
  const loaded = await loadPackage(dir, options);
  return {
    spec: loaded.spec,
    rejected: loaded.rejected,
    findings: loaded.findings,
    skills: [...loaded.skills.keys()],
    servers: Object.keys(loaded.servers),
    mcpDisabled: !loaded.rejected && loaded.mcpDisabled,
    skippedSkills: loaded.skippedSkills,
    skippedServers: loaded.skippedServers,
  };
}
