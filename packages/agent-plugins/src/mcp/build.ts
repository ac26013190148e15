import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { MCP_FINDING_CODES } from './codes.js';
import { type McpServer, type McpServerType, ServerReport, checkServer, packagePath, sortedRecord } from './check.js';
import { isRecord, kindOf } from '../values.js';

/**
 * A server as the project configures it (`[[mcp_servers]]` or `[[plugin.mcp]]`). `transport`
 * defaults to stdio when `command` is set and to streamable-http when only `url` is.
 */
export interface McpServerConfig {
  /** The key in mcp.json `mcpServers`; unique among enabled servers. Required. */
  name: string;
  /** `stdio` runs `command`; `http` (streamable HTTP) and `sse` reach `url`. Default: inferred, never `sse`. */
  transport?: 'stdio' | 'http' | 'sse';
  /** stdio: the program, `./bin/server` shipped in the package or a name on the user's PATH. */
  command?: string;
  /** stdio: its arguments; the client expands `${PLUGIN_ROOT}` and `${PLUGIN_DATA}` only. */
  args?: readonly string[];
  /** stdio: environment variables; never a credential (a likely secret is an error finding). */
  env?: Readonly<Record<string, string>>;
  /** stdio: `./…`, `${PLUGIN_ROOT}[/…]` or `${PLUGIN_DATA}[/…]`. */
  cwd?: string;
  /** http and sse: an absolute https URL (http only to a loopback host). */
  url?: string;
  /** http and sse: headers for every request; Authorization, Proxy-Authorization and Cookie are refused. */
  headers?: Readonly<Record<string, string>>;
  /** `false` leaves the server out (a warning). Default true. */
  enabled?: boolean;
}

export interface BuildServersOptions {
  /** Package-relative paths that will be in the package ("bin/server"; a leading "./" is ignored). */
  files: ReadonlySet<string>;
}

export interface McpServers {
  /** mcp.json `mcpServers`: names sorted, each entry's fields in a fixed order. */
  servers: Record<string, McpServer>;
  /** Sorted with sortFindings. */
  findings: Finding[];
}

const TRANSPORT_TYPES: Readonly<Record<string, McpServerType>> = {
  stdio: 'stdio',
  http: 'streamable-http',
  sse: 'sse',
};
const STDIO_ONLY = ['command', 'args', 'env', 'cwd'] as const;
const REMOTE_ONLY = ['url', 'headers'] as const;
const ROOT_PREFIX = '${PLUGIN_ROOT}/';

/** The server type `config` selects, or undefined after reporting why it selects none. */
function serverType(config: McpServerConfig, report: ServerReport): McpServerType | undefined {
  const transport: unknown = config.transport;
  if (transport === undefined) {
    if (config.command !== undefined && config.url !== undefined) {
      report.add('mcp.transport-ambiguous', [], 'sets both command and url but no transport');
      return undefined;
    }
    // sse is never inferred: it is the deprecated transport and needs an explicit choice.
    return config.url !== undefined ? 'streamable-http' : 'stdio';
  }
  const type =
    typeof transport === 'string' && Object.hasOwn(TRANSPORT_TYPES, transport) ? TRANSPORT_TYPES[transport] : undefined;
  if (type === undefined) report.add('mcp.transport-unknown', [], 'has a transport that is not stdio, http or sse');
  return type;
}

/**
 * The entry `config` asks for, before the entry rules are checked: a ${PLUGIN_ROOT}/ command
 * made plugin-relative, KEY = "${KEY}" env entries and the other transport's fields left out,
 * empty args, env and headers omitted (they mean the same as absent).
 */
function draftEntry(config: McpServerConfig, type: McpServerType, report: ServerReport): Record<string, unknown> {
  const entry: Record<string, unknown> = { type };
  const notPackaged = (fields: readonly (keyof McpServerConfig)[]) => {
    for (const field of fields) {
      if (config[field] !== undefined)
        report.add('mcp.field-not-packaged', [], `has ${field}, which a ${type} server does not take; it is left out`);
    }
  };
  if (type !== 'stdio') {
    notPackaged(STDIO_ONLY);
    if (config.url !== undefined) entry.url = config.url;
    if (config.headers !== undefined && !(isRecord(config.headers) && Object.keys(config.headers).length === 0))
      entry.headers = config.headers;
    return entry;
  }
  notPackaged(REMOTE_ONLY);
  let command: unknown = config.command;
  if (typeof command === 'string' && command.startsWith(ROOT_PREFIX)) {
    // Lossless: the client resolves ./ against the plugin root, which is what PLUGIN_ROOT holds.
    command = `./${command.slice(ROOT_PREFIX.length)}`;
    report.add('mcp.command-rewritten', ['command'], 'is written as a "./" path: command is never expanded');
  }
  if (command !== undefined) entry.command = command;
  if (config.args !== undefined && !(Array.isArray(config.args) && config.args.length === 0)) entry.args = config.args;
  if (config.env !== undefined) {
    if (isRecord(config.env)) {
      const kept: [string, unknown][] = [];
      for (const [key, value] of Object.entries(config.env)) {
        // A reserved name is kept so the entry check refuses it rather than dropping it quietly.
        const reserved = key.toUpperCase() === 'PLUGIN_ROOT' || key.toUpperCase() === 'PLUGIN_DATA';
        if (!reserved && value === `\${${key}}`)
          report.add(
            'mcp.env-forward-dropped',
            ['env', key],
            'only forwards the variable of the same name, which no client expands; it is left out',
          );
        else kept.push([key, value]);
      }
      if (kept.length > 0) entry.env = sortedRecord(kept);
    } else {
      entry.env = config.env;
    }
  }
  if (config.cwd !== undefined) entry.cwd = config.cwd;
  return entry;
}

const CONTROL = /\p{Cc}/u;

/**
 * Builds mcp.json `mcpServers` from the project's servers (§7.2.1, §9.2). Each server is
 * checked on its own, so one bad entry never costs another its place. A server is left out when:
 *
 * | Configuration                                              | Code                              |
 * |------------------------------------------------------------|-----------------------------------|
 * | `enabled = false`                                          | mcp.server-disabled (warning)     |
 * | empty name or a control character in it                   | mcp.server-name-invalid           |
 * | a name used by two enabled servers (all of them)           | mcp.server-name-duplicate         |
 * | unknown transport / command and url without transport     | mcp.transport-unknown / -ambiguous|
 * | a broken entry rule (command, cwd, env, url, headers)      | see MCP_FINDING_CODES             |
 * | a `${VAR}` a client would not expand                       | mcp.placeholder-rejected          |
 * | an Authorization, Proxy-Authorization or Cookie header     | mcp.header-credential-rejected    |
 *
 * and packaged with a change when the command is `${PLUGIN_ROOT}/…` (info), an env entry only
 * forwards its own name, or a field belongs to the other transport (warnings). The result is
 * the same for the same servers in any order. Pure; the input is not changed.
 */
export function buildServers(config: readonly McpServerConfig[], { files }: BuildServersOptions): McpServers {
  const findings: Finding[] = [];
  const byName = new Map<string, McpServerConfig[]>();
  for (const server of config) {
    const name: unknown = server.name;
    if (typeof name !== 'string') {
      // Without a name there is no member to point at, so the finding names mcpServers itself.
      findings.push(
        findingFrom(
          MCP_FINDING_CODES,
          'mcp.server-name-invalid',
          'mcp.json#/mcpServers',
          `a server has a name that is ${kindOf(name)}, not a string`,
        ),
      );
      continue;
    }
    const report = new ServerReport(name);
    if (name === '' || CONTROL.test(name)) {
      report.add('mcp.server-name-invalid', [], 'must be a non-empty name without control characters');
    } else if (server.enabled === false) {
      report.add('mcp.server-disabled', [], 'is disabled and is left out: mcp.json has no enabled flag');
    } else if (server.enabled !== undefined && server.enabled !== true) {
      report.add('mcp.field-type', [], `has enabled set to ${kindOf(server.enabled)}, not true or false`);
    } else {
      byName.set(name, [...(byName.get(name) ?? []), server]);
    }
    findings.push(...report.findings);
  }

  const normalizedFiles = new Set([...files].map(packagePath));
  const servers: [string, McpServer][] = [];
  for (const [name, group] of byName) {
    const report = new ServerReport(name);
    const [server, ...others] = group;
    if (server === undefined || others.length > 0) {
      report.add('mcp.server-name-duplicate', [], `is configured ${group.length} times; none of them is packaged`);
      findings.push(...report.findings);
      continue;
    }
    const type = serverType(server, report);
    if (type === undefined) {
      findings.push(...report.findings);
      continue;
    }
    const entry = draftEntry(server, type, report);
    const checked = checkServer(name, entry, { mode: 'build', files: normalizedFiles });
    findings.push(...report.findings, ...checked.findings);
    if (checked.server !== undefined) servers.push([name, checked.server]);
  }
  return { servers: sortedRecord(servers), findings: sortFindings(findings) };
}
