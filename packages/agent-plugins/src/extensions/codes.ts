import type { FindingCodeInfo } from '../findings.js';

/**
 * Findings about client extension content (Agent Plugins §8): manifest data under
 * `extensions.<namespace>` and files under a `<namespace>/` folder.
 */
export const EXTENSION_FINDING_CODES = Object.freeze({
  'extension.namespace-invalid': {
    rule: 'AR9O0',
    severity: 'error',
    text:
      'An extension namespace must be reverse-domain: two or more dot-separated labels of a-z, 0-9 and "-", each 1-63 ' +
      'characters with a letter or digit at both ends, the first starting with a letter (§8). A namespace folder may ' +
      'also not be named for a file at the package root (plugin.json, mcp.json, package.json). The namespace is not packaged.',
  },
  'extension.path-invalid': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      'A file of a namespace folder has a relative, "/"-separated path with no empty, "." or ".." segment, backslash, ' +
      'NUL or drive letter (§4.1: every package path stays inside the plugin root). The file is not packaged.',
  },
  'extension.layout-unknown': {
    rule: 'AR9O0',
    severity: 'warning',
    text:
      'A file in the folder of a known namespace is not where that client looks for content (for example ' +
      'com.anthropic.claude-code/agents/<name>.md). It is packaged as it is, since each client defines its own folder ' +
      '(§8), but the client may ignore it and import has no equivalent for it.',
  },
  'extension.data-not-object': {
    rule: 'AR9O4',
    severity: 'warning',
    text: 'The manifest data of a namespace must be an object (§8.1); any other value would reject the plugin, so it is left out.',
  },
  'extension.data-not-json': {
    rule: 'AR9O4',
    severity: 'warning',
    text:
      'Manifest data must be JSON: null, booleans, finite numbers, strings, arrays and plain objects. A namespace ' +
      'holding anything else (a date, undefined, a function, NaN) cannot be written to plugin.json and is left out.',
  },
  'extension.interface-not-object': {
    rule: 'AR9O4',
    severity: 'warning',
    text: 'The Codex interface block (extensions["com.openai"].interface) must be an object, as [plugin.interface] is a table; any other value is left out.',
  },
} as const satisfies Record<string, FindingCodeInfo>);
