import { type Finding, findingFrom } from '../findings.js';
import { MCP_FINDING_CODES, type McpFindingCode } from './codes.js';
import { commandForm, unbundledCommand } from './command.js';
import { serverSchemaAccepts } from './schema.js';
import { scanServerSecrets } from '../secrets/scan.js';
import { byteOrder } from '../text.js';
import { isRecord, kindOf, pointerToken } from '../values.js';

/** A stdio entry of mcp.json `mcpServers` (§7.2.1). */
export interface McpStdioServer {
  type: 'stdio';
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** A streamable-http or legacy sse entry of mcp.json `mcpServers` (§7.2.1). */
export interface McpRemoteServer {
  type: 'streamable-http' | 'sse';
  url: string;
  headers?: Record<string, string>;
}

export type McpServer = McpStdioServer | McpRemoteServer;
export type McpServerType = McpServer['type'];

/** The fields of each closed variant, in the order they are written (§7.2.1). */
const VARIANT_FIELDS: Readonly<Record<McpServerType, readonly string[]>> = {
  stdio: ['type', 'command', 'args', 'env', 'cwd'],
  'streamable-http': ['type', 'url', 'headers'],
  sse: ['type', 'url', 'headers'],
};

const isServerType = (value: unknown): value is McpServerType =>
  value === 'stdio' || value === 'streamable-http' || value === 'sse';

/** `mcp.json#/mcpServers/<name>[/part…]`, every part escaped. */
export function serverPath(name: string, ...parts: readonly (string | number)[]): string {
  return ['mcp.json#/mcpServers', pointerToken(name), ...parts.map((p) => pointerToken(String(p)))].join('/');
}

/**
 * A new object with `entries` sorted by key. Built with fromEntries so a key such as
 * `__proto__` stays an own data property instead of replacing the prototype.
 */
export function sortedRecord<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => byteOrder(a, b)));
}

/** Collects one server's findings; `failed` once any of them is an error. */
export class ServerReport {
  readonly findings: Finding[] = [];
  constructor(readonly name: string) {}

  add(code: McpFindingCode, parts: readonly (string | number)[], message: string): void {
    this.findings.push(findingFrom(MCP_FINDING_CODES, code, serverPath(this.name, ...parts), message));
  }

  get failed(): boolean {
    return this.findings.some((f) => f.severity === 'error');
  }
}

/**
 * build: what the project configures is about to be shipped, so a broken plugin-side MUST
 * is an error and the server is not packaged. read: what a conformant client does with a
 * package, where only the entry rules of §7.2.1 skip a server.
 */
type CheckMode = 'build' | 'read';

export interface CheckContext {
  mode: CheckMode;
  /** Package-relative paths (no leading "./") that will be in the package; build only. */
  files?: ReadonlySet<string>;
}

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const PLUGIN_VARS: ReadonlySet<string> = new Set(['PLUGIN_ROOT', 'PLUGIN_DATA']);

/**
 * Whether `value` holds a `${…}` the client leaves literal: any placeholder where nothing is
 * expanded (url, headers), or one other than PLUGIN_ROOT/PLUGIN_DATA where they are (§9.2).
 */
function hasUnsupportedPlaceholder(value: string, expanded: boolean): boolean {
  for (const match of value.matchAll(PLACEHOLDER)) {
    if (!expanded || !PLUGIN_VARS.has(match[1] ?? '')) return true;
  }
  return false;
}

function checkPlaceholders(
  report: ServerReport,
  ctx: CheckContext,
  parts: readonly (string | number)[],
  value: string,
  expanded: boolean,
): void {
  if (!hasUnsupportedPlaceholder(value, expanded)) return;
  const where = expanded
    ? 'a ${…} placeholder other than ${PLUGIN_ROOT} and ${PLUGIN_DATA}'
    : 'a ${…} placeholder, and nothing is expanded in this field';
  if (ctx.mode === 'build') report.add('mcp.placeholder-rejected', parts, `holds ${where}; the server is not packaged`);
  else report.add('mcp.placeholder-literal', parts, `holds ${where}; it stays literal text`);
}

const CONTROL = /\p{Cc}/u;

/** Strips the leading "./" a `files` entry or a command may carry. */
export const packagePath = (path: string): string => (path.startsWith('./') ? path.slice(2) : path);

/**
 * One token the way §7.2.1 says (commandForm): a bare name, or a "./" path inside the plugin.
 * When the packaged files are known, a "./" path is one token if the package has that file;
 * one that names no file is a command line when it holds whitespace or a shell operator,
 * and otherwise a token for a file that was not shipped.
 */
function checkCommand(report: ServerReport, ctx: CheckContext, command: string): void {
  const form = commandForm(command);
  if (form.kind === 'escapes') report.add('mcp.command-escapes', ['command'], form.reason);
  else if (form.kind === 'invalid') report.add('mcp.command-invalid', ['command'], form.reason);
  else if (form.kind === 'path' && ctx.files !== undefined && !ctx.files.has(form.path)) {
    const problem = unbundledCommand(command, 'absent');
    if ('invalid' in problem) report.add('mcp.command-invalid', ['command'], problem.invalid);
    else report.add('mcp.command-not-bundled', ['command'], 'names a file that is not in the package');
  }
}

const CWD_ROOTS = ['./', '${PLUGIN_ROOT}', '${PLUGIN_DATA}'] as const;

function checkCwd(report: ServerReport, ctx: CheckContext, cwd: string): void {
  let rest: string | undefined;
  for (const root of CWD_ROOTS) {
    if (cwd === root) rest = '';
    else if (cwd.startsWith(root.endsWith('/') ? root : `${root}/`))
      rest = cwd.slice(root.endsWith('/') ? root.length : root.length + 1);
    if (rest !== undefined) break;
  }
  if (rest === undefined || CONTROL.test(cwd) || cwd.includes('\\')) {
    report.add(
      'mcp.cwd-invalid',
      ['cwd'],
      'must be "./…", ${PLUGIN_ROOT}[/…] or ${PLUGIN_DATA}[/…], without backslashes or control characters',
    );
    return;
  }
  // Lexical normalization is not enough: a ".." after a symlinked directory resolves against
  // the link target, so any ".." segment may escape (§4.1 containment is post-resolution).
  if (rest.split('/').includes('..')) {
    report.add('mcp.cwd-escapes', ['cwd'], 'holds a ".." segment and may resolve outside its root');
    return;
  }
  checkPlaceholders(report, ctx, ['cwd'], cwd, true);
}

function checkArgs(report: ServerReport, ctx: CheckContext, args: unknown): string[] | undefined {
  if (!Array.isArray(args)) {
    report.add('mcp.field-type', ['args'], `must be an array of strings, not ${kindOf(args)}`);
    return undefined;
  }
  const out: string[] = [];
  args.forEach((arg: unknown, i) => {
    if (typeof arg !== 'string') report.add('mcp.field-type', ['args', i], `must be a string, not ${kindOf(arg)}`);
    else {
      checkPlaceholders(report, ctx, ['args', i], arg, true);
      out.push(arg);
    }
  });
  return out;
}

function isReservedEnv(key: string, mode: CheckMode): boolean {
  return PLUGIN_VARS.has(mode === 'build' ? key.toUpperCase() : key);
}

function checkEnv(report: ServerReport, ctx: CheckContext, env: unknown): Record<string, string> | undefined {
  if (!isRecord(env)) {
    report.add('mcp.field-type', ['env'], `must be an object of strings, not ${kindOf(env)}`);
    return undefined;
  }
  const entries: [string, string][] = [];
  for (const [key, value] of Object.entries(env)) {
    if (typeof value !== 'string') {
      report.add('mcp.field-type', ['env', key], `must be a string, not ${kindOf(value)}`);
      continue;
    }
    if (isReservedEnv(key, ctx.mode)) {
      report.add('mcp.env-reserved', ['env', key], 'is supplied by the client and must not be set');
      continue;
    }
    if (ctx.mode === 'build' && (key === '' || key.includes('=') || CONTROL.test(key))) {
      report.add('mcp.env-name-invalid', ['env', key], 'is not a settable environment variable name');
      continue;
    }
    // Names are never expanded (§9.2), so any placeholder in one stays literal.
    checkPlaceholders(report, ctx, ['env', key], key, false);
    checkPlaceholders(report, ctx, ['env', key], value, true);
    entries.push([key, value]);
  }
  return sortedRecord(entries);
}

const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** `localhost` or a loopback IP literal as the WHATWG parser writes it (it canonicalizes 127.1, [0:…:1]). */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || LOOPBACK_V4.test(hostname) || hostname === '[::1]';
}

function checkUrl(report: ServerReport, ctx: CheckContext, url: string): void {
  checkPlaceholders(report, ctx, ['url'], url, false);
  // Checked on the text, before parsing: the WHATWG parser silently strips tabs and newlines
  // and reads "\" as "/", so a parsed URL can differ from what another client sees.
  const head = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const scheme = head?.[1]?.toLowerCase();
  if (head === null || parsed === undefined || (scheme !== 'http' && scheme !== 'https') || /[\s\p{Cc}\\]/u.test(url)) {
    report.add(
      'mcp.url-invalid',
      ['url'],
      'is not an absolute http or https URL without whitespace, control characters or backslashes',
    );
    return;
  }
  if (head[2]?.includes('@')) report.add('mcp.url-userinfo', ['url'], 'contains user information');
  if (url.includes('#')) report.add('mcp.url-fragment', ['url'], 'contains a fragment');
  if (scheme === 'http' && !isLoopbackHost(parsed.hostname))
    report.add('mcp.url-insecure', ['url'], 'uses http to a host that is not localhost or a loopback address');
}

// RFC 9110 §5.6.2 token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 9110 §5.5 field-value: visible ASCII and obs-text, inner spaces and tabs, nothing at the ends.
const FIELD_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie']);

function checkHeaders(report: ServerReport, ctx: CheckContext, headers: unknown): Record<string, string> | undefined {
  if (!isRecord(headers)) {
    report.add('mcp.field-type', ['headers'], `must be an object of strings, not ${kindOf(headers)}`);
    return undefined;
  }
  const byLowerName = new Map<string, number>();
  for (const name of Object.keys(headers))
    byLowerName.set(name.toLowerCase(), (byLowerName.get(name.toLowerCase()) ?? 0) + 1);
  const entries: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') {
      report.add('mcp.field-type', ['headers', name], `must be a string, not ${kindOf(value)}`);
      continue;
    }
    if (!TOKEN.test(name)) report.add('mcp.header-name-invalid', ['headers', name], 'is not a valid HTTP header name');
    // Every name of a clashing group is reported, so the findings do not depend on key order.
    if ((byLowerName.get(name.toLowerCase()) ?? 0) > 1)
      report.add('mcp.header-duplicate', ['headers', name], 'is set more than once under different casing');
    if (!FIELD_VALUE.test(value))
      report.add('mcp.header-value-invalid', ['headers', name], 'is not a valid HTTP header value');
    checkPlaceholders(report, ctx, ['headers', name], value, false);
    if (CREDENTIAL_HEADERS.has(name.toLowerCase())) {
      if (ctx.mode === 'build')
        report.add(
          'mcp.header-credential-rejected',
          ['headers', name],
          'carries a credential, which must not be packaged; the server is not packaged',
        );
      else report.add('mcp.header-credential', ['headers', name], 'carries a credential in plain package data');
    }
    entries.push([name, value]);
  }
  return sortedRecord(entries);
}

export interface ServerCheck {
  /** The entry in its written form (fields in variant order, env and headers sorted), or undefined when skipped. */
  server: McpServer | undefined;
  findings: Finding[];
}

/**
 * Checks one server entry against §7.2.1 and §9.2, on its own: nothing about another entry
 * changes the outcome (§7.2.2). The input is not changed; the returned entry shares nothing
 * with it.
 */
export function checkServer(name: string, entry: unknown, ctx: CheckContext): ServerCheck {
  const report = new ServerReport(name);
  const skipped = (): ServerCheck => ({ server: undefined, findings: report.findings });
  if (!isRecord(entry)) {
    report.add('mcp.server-not-object', [], `must be an object, not ${kindOf(entry)}`);
    return skipped();
  }
  if (!Object.hasOwn(entry, 'type')) {
    report.add('mcp.type-missing', ['type'], 'is required');
    return skipped();
  }
  const type = entry.type;
  if (!isServerType(type)) {
    report.add('mcp.type-unknown', ['type'], 'is not stdio, streamable-http or sse');
    return skipped();
  }
  const fields = VARIANT_FIELDS[type];
  for (const key of Object.keys(entry)) {
    if (!fields.includes(key)) report.add('mcp.field-unknown', [key], `is not a field of a ${type} server`);
  }
  const requireString = (key: string): string | undefined => {
    const value = entry[key];
    if (!Object.hasOwn(entry, key)) report.add('mcp.field-missing', [key], `is required for a ${type} server`);
    else if (typeof value !== 'string') report.add('mcp.field-type', [key], `must be a string, not ${kindOf(value)}`);
    else return value;
    return undefined;
  };

  let server: McpServer;
  if (type === 'stdio') {
    const command = requireString('command');
    if (command !== undefined) checkCommand(report, ctx, command);
    const stdio: McpStdioServer = { type, command: command ?? '' };
    if (Object.hasOwn(entry, 'args')) {
      const args = checkArgs(report, ctx, entry.args);
      if (args !== undefined) stdio.args = args;
    }
    if (Object.hasOwn(entry, 'env')) {
      const env = checkEnv(report, ctx, entry.env);
      if (env !== undefined) stdio.env = env;
    }
    if (Object.hasOwn(entry, 'cwd')) {
      if (typeof entry.cwd !== 'string')
        report.add('mcp.field-type', ['cwd'], `must be a string, not ${kindOf(entry.cwd)}`);
      else {
        checkCwd(report, ctx, entry.cwd);
        stdio.cwd = entry.cwd;
      }
    }
    server = stdio;
  } else {
    const url = requireString('url');
    if (url !== undefined) checkUrl(report, ctx, url);
    const remote: McpRemoteServer = { type, url: url ?? '' };
    if (Object.hasOwn(entry, 'headers')) {
      const headers = checkHeaders(report, ctx, entry.headers);
      if (headers !== undefined) remote.headers = headers;
    }
    server = remote;
  }

  // §7.2.1 and §9.2: no secret in env or headers (nor args or url, package data alike).
  // Authorization-like headers and url userinfo already have their own finding above.
  report.findings.push(
    ...scanServerSecrets(name, server, { mode: ctx.mode, skipHeaders: CREDENTIAL_HEADERS, skipUrlUserinfo: true }),
  );
  if (report.failed) return skipped();
  if (!serverSchemaAccepts(server)) {
    report.add('mcp.schema-violation', [], 'does not match the server definition of mcp.schema.json');
    return skipped();
  }
  return { server, findings: report.findings };
}
