import { type Finding, findingFrom } from '../findings.js';
import { pointerToken } from '../values.js';
import { SECRET_FINDING_CODES } from './codes.js';
import { type SecretContext, type SecretMatch, detectSecret } from './detect.js';

/** The fields of an mcp.json server entry that are scanned; the others hold no free text. */
export interface ScannedServer {
  type: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  url?: string;
  headers?: Readonly<Record<string, string>>;
}

export interface SecretScanOptions {
  /** build: an error, the server is not packaged; read: a warning, the client loads it. */
  mode: 'build' | 'read';
  /**
   * Header names (lower case) whose value another check already reports as a credential
   * (Authorization, Proxy-Authorization, Cookie): not reported twice.
   */
  skipHeaders?: ReadonlySet<string>;
  /** Whether the URL's user:password@ is already reported by the URL check. */
  skipUrlUserinfo?: boolean;
}

// A flag that takes the next argument or `=value`: --api-key, --token, -password.
const FLAG = /^--?([A-Za-z][A-Za-z0-9_.-]*)$/;
const FLAG_WITH_VALUE = /^--?([A-Za-z][A-Za-z0-9_.-]*)=(.*)$/s;

/**
 * The findings for likely secrets in one server entry: each env value, each header value,
 * each argument (with the flag before it, or its own `--flag=` name, as the name) and the URL.
 * Paths point at the value (`mcp.json#/mcpServers/<name>/env/<KEY>`); a message names the
 * kind of secret and at most its public marker, never the value.
 */
export function scanServerSecrets(name: string, server: ScannedServer, options: SecretScanOptions): Finding[] {
  const findings: Finding[] = [];
  const code = options.mode === 'build' ? 'secret.embedded-rejected' : 'secret.embedded';
  const report = (parts: readonly (string | number)[], match: SecretMatch) => {
    const path = ['mcp.json#/mcpServers', pointerToken(name), ...parts.map((p) => pointerToken(String(p)))].join('/');
    const shown = match.masked === undefined ? '' : ` (${match.masked})`;
    const outcome =
      options.mode === 'build'
        ? 'secrets must not be packaged; the server is not packaged'
        : 'it is plain package data; treat it as leaked';
    findings.push(
      findingFrom(SECRET_FINDING_CODES, code, path, `holds ${match.title}${shown}, rule ${match.rule}; ${outcome}`),
    );
  };
  const look = (parts: readonly (string | number)[], value: string, context: SecretContext) => {
    const match = detectSecret(value, context);
    if (match !== undefined) report(parts, match);
  };

  for (const [key, value] of Object.entries(server.env ?? {})) look(['env', key], value, { field: 'env', name: key });
  (server.args ?? []).forEach((arg, i, args) => {
    const inline = FLAG_WITH_VALUE.exec(arg);
    if (inline !== null) {
      look(['args', i], inline[2] ?? '', { field: 'arg', name: inline[1] ?? '' });
      return;
    }
    const flag = i > 0 ? FLAG.exec(args[i - 1] ?? '') : null;
    look(
      ['args', i],
      arg,
      flag === null || arg.startsWith('-') ? { field: 'arg' } : { field: 'arg', name: flag[1] ?? '' },
    );
  });
  if (server.url !== undefined) {
    // user:password@ in the URL itself is the URL check's finding when it makes one.
    const url = options.skipUrlUserinfo
      ? server.url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/, '$1')
      : server.url;
    look(['url'], url, { field: 'url' });
  }
  for (const [header, value] of Object.entries(server.headers ?? {})) {
    if (options.skipHeaders?.has(header.toLowerCase())) continue;
    look(['headers', header], value, { field: 'header', name: header });
  }
  return findings;
}

/** The plugin.json fields that hold URLs, as JSON pointers: where a token in a clone URL hides. */
const MANIFEST_URL_FIELDS: ReadonlyArray<readonly string[]> = [['homepage'], ['repository'], ['author', 'url']];

export interface ManifestSecret {
  /** The field's keys from the manifest root (`['author', 'url']`). */
  field: readonly string[];
  finding: Finding;
}

/**
 * Likely secrets in plugin.json's URL fields (homepage, repository, author.url), such as
 * `https://x-access-token:ghp_…@github.com/acme/tools`. plugin.json is package data like
 * mcp.json; §5.4 checks these fields only as strings, so this is a finding, never a rejection:
 * at build an error and the field is left out, on read a warning.
 */
export function scanManifestSecrets(manifest: unknown, mode: 'build' | 'read'): ManifestSecret[] {
  const found: ManifestSecret[] = [];
  const code = mode === 'build' ? 'secret.embedded-rejected' : 'secret.embedded';
  for (const field of MANIFEST_URL_FIELDS) {
    let value: unknown = manifest;
    for (const key of field)
      value =
        value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : undefined;
    if (typeof value !== 'string') continue;
    const match = detectSecret(value, { field: 'url' });
    if (match === undefined) continue;
    const shown = match.masked === undefined ? '' : ` (${match.masked})`;
    const outcome =
      mode === 'build'
        ? 'secrets must not be packaged; the field is left out'
        : 'it is plain package data; treat it as leaked';
    found.push({
      field,
      finding: findingFrom(
        SECRET_FINDING_CODES,
        code,
        `plugin.json#/${field.join('/')}`,
        `holds ${match.title}${shown}, rule ${match.rule}; ${outcome}`,
      ),
    });
  }
  return found;
}
