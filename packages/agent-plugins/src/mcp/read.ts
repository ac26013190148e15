import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { type McpServer, checkServer, sortedRecord } from './check.js';
import { isRecord, kindOf, pointerToken } from '../values.js';
import { MCP_FINDING_CODES, type McpFindingCode } from './codes.js';

export interface McpServersRead {
  /** The servers a conformant client loads: names sorted, each entry's fields in a fixed order. */
  servers: Record<string, McpServer>;
  /** True when a client must disable MCP for the plugin (§7.2.2); `servers` is then empty. */
  mcpDisabled: boolean;
  /** Sorted with sortFindings. */
  findings: Finding[];
}

const TOP_LEVEL: ReadonlySet<string> = new Set(['$schema', 'mcpServers']);

const topLevel = (code: McpFindingCode, pointer: string, message: string): Finding =>
  findingFrom(MCP_FINDING_CODES, code, `mcp.json#${pointer}`, message);

/**
 * Reads the servers of a parsed mcp.json the way a conformant client loads them (§7.2.1,
 * §7.2.2, §9.2): a top-level violation disables MCP, an invalid entry is skipped on its own
 * and the others still load. Unlike building, a `${VAR}` a client leaves literal and a
 * credential header are warnings: the entry is valid, the client loads it. A "./" command is
 * accepted whatever its characters (`./bin/probe token.sh` is one token, §7.2.1): whether the
 * package has that file, which decides whether it is one, is for loadPackage to see.
 *
 * `$schema` and the version match are checkMcpManifestVersion's (manifest.ts); a value that
 * is not an object is reported there, and here only disables MCP. Pure; the input is not changed.
 */
export function readServers(mcpJson: unknown): McpServersRead {
  if (!isRecord(mcpJson)) return { servers: {}, mcpDisabled: true, findings: [] };
  const findings: Finding[] = [];
  for (const key of Object.keys(mcpJson)) {
    if (!TOP_LEVEL.has(key))
      findings.push(
        topLevel('mcp.top-level-field-unknown', `/${pointerToken(key)}`, 'is not an mcp.json field; MCP is disabled'),
      );
  }
  const servers = mcpJson.mcpServers;
  if (!Object.hasOwn(mcpJson, 'mcpServers')) {
    findings.push(topLevel('mcp.servers-missing', '/mcpServers', 'is required; MCP is disabled'));
  } else if (!isRecord(servers)) {
    findings.push(
      topLevel('mcp.servers-not-object', '/mcpServers', `must be an object, not ${kindOf(servers)}; MCP is disabled`),
    );
  }
  if (findings.length > 0 || !isRecord(servers))
    return { servers: {}, mcpDisabled: true, findings: sortFindings(findings) };

  const loaded: [string, McpServer][] = [];
  for (const [name, entry] of Object.entries(servers)) {
    const checked = checkServer(name, entry, { mode: 'read' });
    findings.push(...checked.findings);
    if (checked.server !== undefined) loaded.push([name, checked.server]);
  }
  return { servers: sortedRecord(loaded), mcpDisabled: false, findings: sortFindings(findings) };
}
