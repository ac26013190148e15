import type { FindingCodeInfo } from '../findings.js';

/**
 * The finding codes of MCP server entries (mcp.json `mcpServers`). The document-level codes
 * ($schema, version mismatch, not an object) stay in FINDING_CODES with the manifest check.
 *
 * Where the same rule is an error when building and a warning when reading, it has two codes:
 * building refuses to ship what breaks a plugin-side MUST, while a client reading a package
 * cannot tell and loads the server (§7.2.2), so the severity is part of the code's meaning.
 */
export const MCP_FINDING_CODES = {
  'mcp.top-level-field-unknown': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json may hold only $schema and mcpServers (§7.2.1). Any other top-level field disables MCP for the plugin; other components still load (§7.2.2).',
  },
  'mcp.servers-missing': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json must have an mcpServers object (§7.2.1). Without it MCP is disabled for the plugin; other components still load (§7.2.2).',
  },
  'mcp.servers-not-object': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcpServers must be an object of server entries (§7.2.1). Any other value disables MCP for the plugin; other components still load (§7.2.2).',
  },
  'mcp.server-name-invalid': {
    rule: 'AR9O2',
    severity: 'error',
    text:
      'A server name must be a non-empty string without control characters. The spec puts no rule on mcpServers member names (§7.2.1), ' +
      "so only building enforces this: the name is the server's identity in every client and report. The server is not packaged.",
  },
  'mcp.server-name-duplicate': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'Server names are the member names of mcpServers and must be unique (§7.2.1). None of the servers sharing a name is packaged, so the result does not depend on configuration order.',
  },
  'mcp.server-disabled': {
    rule: 'AR9O4',
    severity: 'warning',
    text: 'mcp.json has no enabled flag (§7.2.1), so a server configured with enabled = false is left out of the package.',
  },
  'mcp.server-not-object': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'A server entry must be a JSON object (§7.2.1). The server is skipped; the other servers still load (§7.2.2).',
  },
  'mcp.transport-unknown': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'transport must be stdio, http (packaged as streamable-http) or sse (§7.2.1). The server is not packaged.',
  },
  'mcp.transport-ambiguous': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'A server with both command and url must name its transport: stdio and the remote variants are closed and exclusive (§7.2.1). The server is not packaged.',
  },
  'mcp.type-missing': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'Every server entry must have a type field (§7.2.1). The server is skipped; the other servers still load (§7.2.2).',
  },
  'mcp.type-unknown': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'type must be stdio, streamable-http or sse; an unknown type makes the entry invalid (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.field-unknown': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'Server variants are closed: an unknown field or a field of another variant makes the entry invalid (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.field-missing': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'A stdio server requires command; a streamable-http or sse server requires url (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.field-type': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'command, cwd and url are strings, args is an array of strings, env and headers are objects of strings (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.field-not-packaged': {
    rule: 'AR9O4',
    severity: 'warning',
    text: 'A field of the other transport (url or headers on a stdio server; command, args, env or cwd on a remote one) has no place in the closed variant (§7.2.1) and is left out.',
  },
  'mcp.command-invalid': {
    rule: 'AR9O2',
    severity: 'error',
    text:
      'command must be one executable token, not a shell command string (§7.2.1): a bare name (npx, my(1).sh) without whitespace, ' +
      'control characters or shell operators, or a "./" path to a file the package has, whatever its characters ' +
      '(./bin/probe token.sh). A "./" path holding whitespace or a shell operator that names no file is a command line ' +
      'written as one string; a client never splits it. No placeholder either: command is never expanded (§9.2). ' +
      'The server is skipped (§7.2.2).',
  },
  'mcp.command-escapes': {
    rule: 'AR9O5',
    severity: 'error',
    text: 'command must not be absolute or hold a ".." segment: it must resolve inside the plugin root (§4.1, §7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.command-rewritten': {
    rule: 'AR9O3',
    severity: 'info',
    text: 'command is not expanded (§9.2), so ${PLUGIN_ROOT}/path is written as the equivalent plugin-relative ./path (§7.2.1).',
  },
  'mcp.command-not-bundled': {
    rule: 'AR9O2',
    severity: 'warning',
    text: 'A "./" command names a file that is not in the package; ship it with [plugin] include or the server will fail to start (§7.2.1).',
  },
  'mcp.cwd-invalid': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'cwd must be "./…", ${PLUGIN_ROOT} or ${PLUGIN_ROOT}/…, ${PLUGIN_DATA} or ${PLUGIN_DATA}/…, without backslashes or control characters (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.cwd-escapes': {
    rule: 'AR9O5',
    severity: 'error',
    text: 'cwd must not hold a ".." segment: it must stay inside the plugin root or the plugin data directory (§4.1, §7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.env-reserved': {
    rule: 'AR9O2',
    severity: 'error',
    text:
      'env must not set PLUGIN_ROOT or PLUGIN_DATA: the client supplies them (§9.1, §9.2). When building, a case variant is refused too, ' +
      'since Windows treats it as the same variable. The server is skipped (§7.2.2).',
  },
  'mcp.env-name-invalid': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'An env name must be non-empty and hold no "=" or control character, or no platform can set it (§9.1). The server is not packaged.',
  },
  'mcp.env-forward-dropped': {
    rule: 'AR9O3',
    severity: 'warning',
    text: 'An env entry KEY = "${KEY}" only forwards a variable, which no client expands (§9.2); it is left out, so the client has to supply KEY itself.',
  },
  'mcp.placeholder-rejected': {
    rule: 'AR9O3',
    severity: 'error',
    text:
      'Clients expand only ${PLUGIN_ROOT} and ${PLUGIN_DATA}, and only in args, env values and cwd (§9.2). Any other ${…} would reach ' +
      'the server as literal text, so the server is not packaged.',
  },
  'mcp.placeholder-literal': {
    rule: 'AR9O3',
    severity: 'warning',
    text: 'A ${…} placeholder other than ${PLUGIN_ROOT} or ${PLUGIN_DATA} in args, env or cwd, or any placeholder in url or headers, stays literal text (§9.2). The server still loads.',
  },
  'mcp.url-invalid': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'url must be an absolute http or https URL, without whitespace, control characters or backslashes (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.url-userinfo': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'url must not contain user information (user:password@) (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.url-fragment': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'url must not contain a fragment (#…) (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.url-insecure': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'url must use https unless the host is exactly localhost or a loopback IP literal (127.0.0.0/8, ::1) (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.header-name-invalid': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'A header name must be an HTTP token (RFC 9110 §5.1) (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.header-value-invalid': {
    rule: 'AR9O2',
    severity: 'error',
    text:
      'A header value must be a valid HTTP field value (RFC 9110 §5.5): no control character other than tab, no character above U+00FF, ' +
      'no leading or trailing whitespace (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.header-duplicate': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'Header names are case-insensitive; the same name twice under different casing makes the entry invalid (§7.2.1). The server is skipped (§7.2.2).',
  },
  'mcp.header-credential-rejected': {
    rule: 'AR9O2',
    severity: 'error',
    text:
      'Authorization, Proxy-Authorization and Cookie carry credentials, which a plugin must not embed in headers (§7.2.1); ' +
      'authorization is client-managed. The server is not packaged.',
  },
  'mcp.header-credential': {
    rule: 'AR9O2',
    severity: 'warning',
    text:
      'Authorization, Proxy-Authorization and Cookie carry credentials, which a plugin must not embed in headers (§7.2.1). ' +
      'A client cannot tell a secret from a public value and still loads the server; treat the value as leaked.',
  },
  'mcp.schema-violation': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'The entry does not match #/$defs/server of the pinned mcp.schema.json (§7.2.1). The server is skipped (§7.2.2).',
  },
} as const satisfies Record<string, FindingCodeInfo>;

export type McpFindingCode = keyof typeof MCP_FINDING_CODES;
