import type { FindingCodeInfo } from '../findings.js';

/**
 * The finding codes of loading a whole package from disk, for what no single-file check can
 * see: a manifest that is absent or not JSON, and plugin-relative MCP paths that do not exist.
 * Prefixed like the table of the file they are about, and disjoint from every other table.
 */
export const VALIDATE_FINDING_CODES = Object.freeze({
  'plugin.missing': {
    rule: 'AR9O0',
    severity: 'error',
    text: 'A plugin must have plugin.json at its root (§4.1 item 2, §5.1). Without it the plugin is rejected.',
  },
  'plugin.not-json': {
    rule: 'AR9O0',
    severity: 'error',
    text: 'plugin.json must be UTF-8 text holding one JSON value (§5.2). Any other content rejects the plugin.',
  },
  'plugin.over-limit': {
    rule: 'AR9O0',
    severity: 'error',
    text: 'plugin.json is over 128 KiB, nests past 64 levels or holds past 100,000 values: it is refused before it is parsed, so that a hostile package cannot exhaust the validator (§5.2 asks for one JSON value; no real manifest comes near). The plugin is rejected.',
  },
  'mcp.not-json': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json must be UTF-8 text holding one JSON value. Any other content disables MCP for the plugin; other components still load (§7.2.2 item 2).',
  },
  'mcp.over-limit': {
    rule: 'AR9O2',
    severity: 'error',
    text: 'mcp.json is over 128 KiB, nests past 64 levels or holds past 100,000 values: it is refused before it is parsed, so that a hostile package cannot exhaust the validator. MCP is disabled for the plugin; other components still load (§7.2.2 item 2).',
  },
  'mcp.cwd-not-directory': {
    rule: 'AR9O2',
    severity: 'warning',
    text:
      'A "./" or ${PLUGIN_ROOT} cwd resolves inside the plugin root but names nothing, or something other than a folder, so ' +
      'the server will fail to start (§7.2.2 item 5). The entry itself is valid and is loaded.',
  },
  'mcp.server-path-refused': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      'A server\'s "./" command or plugin-root cwd does not resolve to an entry inside the plugin root: a link on the way ' +
      'leads outside it, loops or points at nothing, or the path cannot be read or is .git metadata (§4.1 item 4, §7.2.1). ' +
      'The entry is invalid and skipped; the other servers and components still load (§7.2.2 item 3). A finding on the ' +
      'path itself says where it failed.',
  },
  'mcp.server-skipped': {
    rule: 'AR9O2',
    severity: 'error',
    text:
      'A server entry of mcp.json that a conformant client does not load, for a reason no finding on the entry names. ' +
      'Every skipped server is reported at its own path (§7.2.2 item 3: the client SHOULD report the invalid entry).',
  },
  'skill.skipped': {
    rule: 'AR9O1',
    severity: 'error',
    text:
      'A discovered skill that a conformant client does not load, for a reason no finding on the skill names: the skills ' +
      'component type was found invalid, or SKILL.md vanished while the package was read. Every skipped skill is reported ' +
      'at its own path (§7.1: the client SHOULD report the invalid skill).',
  },
  'package.link-cycle': {
    rule: 'AR9O5',
    severity: 'warning',
    text:
      'A link leads to a folder that contains it, so the package has no finite list of paths. Every path through it still ' +
      'resolves inside the root; validation and import do not descend into it again.',
  },
} as const satisfies Record<string, FindingCodeInfo>);
