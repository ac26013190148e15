import type { ErrorObject } from 'ajv/dist/2020.js';
import { type Finding, finding, sortFindings } from './findings.js';
import { PLUGIN_VALIDATORS } from './generated/validators.js';
import { PINNED_SCHEMAS, SPEC_VERSIONS, type SpecVersion, specOfMcpSchemaId, specOfPluginSchemaId } from './schemas.js';
import { isRecord, kindOf, pointerToken } from './values.js';

const PLUGIN_FILE = 'plugin.json';
const MCP_FILE = 'mcp.json';

export interface PluginManifestCheck {
  /** The version `$schema` names, or undefined when it names none this package supports. */
  spec: SpecVersion | undefined;
  /**
   * The manifest a client would load: unknown top-level fields, a non-object `extensions`,
   * an empty `author` and a non plugin-relative `presentation.icon` are left out. Undefined
   * when rejected. A new top-level object; nested values that were kept are shared with the
   * input, not copied.
   */
  manifest: Record<string, unknown> | undefined;
  /** True when a conformant client must reject the plugin and load none of its components (§5.2). */
  rejected: boolean;
  /** Sorted with sortFindings. */
  findings: Finding[];
}

export interface McpVersionCheck {
  /** The version mcp.json's `$schema` names, or undefined when it names none this package supports. */
  spec: SpecVersion | undefined;
  /** True when a client must disable MCP for the plugin; the plugin itself still loads (§7.2.2, §10.1). */
  mcpDisabled: boolean;
  findings: Finding[];
}

function at(file: string, pointer: string): string {
  return `${file}#${pointer}`;
}

/**
 * Why `name` breaks the plugin name rule (§5.5), or undefined when it is valid. Checked in
 * code as well as by the schema's pattern, so the finding says which part of the rule failed.
 *
 * | Rule                                   | Refused                     |
 * |----------------------------------------|-----------------------------|
 * | 1 to 64 characters                     | `''`, 65 characters         |
 * | only `a-z`, `0-9`, `-` and `.`         | `My-Plugin`, `a_b`, `é`     |
 * | a letter or digit at both ends         | `-start`, `end.`            |
 * | no `--` and no `..`                    | `has--double`, `a..b`       |
 */
export function pluginNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  // Counted in code points: the schema's maxLength counts characters, not UTF-16 units.
  if (Array.from(name).length > 64) return 'is longer than 64 characters';
  if (!/^[a-z0-9.-]+$/.test(name)) return 'may hold only lower-case letters a-z, digits, "-" and "."';
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) return 'must start and end with a lower-case letter or digit';
  if (name.includes('--')) return 'contains "--"';
  if (name.includes('..')) return 'contains ".."';
  return undefined;
}

const NAMESPACE_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const NAMESPACE = new RegExp(`^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.${NAMESPACE_LABEL})+$`);

/**
 * Whether `key` is a reverse-domain extension namespace (§8): two or more dot-separated DNS
 * labels, each 1-63 characters of `a-z`, `0-9` and `-` with a letter or digit at both ends,
 * the first (a top-level domain) starting with a letter, 253 characters at most. Lower case
 * only: the namespace also names a top-level directory (§8.2), and `com.Example` and
 * `com.example` would be one directory on a case-insensitive file system.
 */
export function isExtensionNamespace(key: string): boolean {
  return key.length <= 253 && NAMESPACE.test(key);
}

/** A `presentation.icon` a client may use: `./`-relative, with no `..` segment or backslash (§4.1, §5.7.2). */
function isPluginRelativePath(path: string): boolean {
  if (!path.startsWith('./') || path.length === 2) return false;
  if (path.includes('\\') || path.includes('\0')) return false;
  return !path.split('/').includes('..');
}

/** The top-level fields the schema of `spec` defines; every other one is unknown (§5.2). */
function knownFields(spec: SpecVersion): ReadonlySet<string> {
  return new Set(Object.keys(PINNED_SCHEMAS[spec].plugin.properties as Record<string, unknown>));
}

// The code check reports these with its own finding (plugin.name-invalid); the schema
// reporting the same failure again would only add noise.
const NAME_KEYWORDS = new Set(['pattern', 'minLength', 'maxLength']);

function schemaFinding(error: ErrorObject): Finding {
  let pointer = error.instancePath;
  let message = error.message ?? 'breaks the schema';
  if (error.keyword === 'required') {
    pointer += `/${pointerToken(String(error.params.missingProperty))}`;
    message = 'is required';
  } else if (error.keyword === 'additionalProperties') {
    pointer += `/${pointerToken(String(error.params.additionalProperty))}`;
    message = `is not a field of ${error.instancePath === '' ? 'the manifest' : 'this object'}`;
  }
  return finding('plugin.schema-violation', at(PLUGIN_FILE, pointer), message);
}

function rejectedAt(spec: SpecVersion | undefined, findings: Finding[]): PluginManifestCheck {
  return { spec, manifest: undefined, rejected: true, findings: sortFindings(findings) };
}

/**
 * Checks a parsed plugin.json the way a conformant client loads it (§5, §8.1, §11.3):
 *
 * | Input                                               | Outcome                              | Code |
 * |-----------------------------------------------------|--------------------------------------|------|
 * | not an object                                        | rejected                             | plugin.not-object |
 * | `$schema` missing / not a supported identifier       | rejected, spec undefined             | plugin.schema-missing / plugin.schema-unsupported |
 * | unknown top-level field (incl. `presentation` in 1.0.0) | warning, field dropped            | plugin.unknown-field |
 * | `extensions` not an object                           | warning, field dropped               | plugin.extensions-not-object |
 * | extension namespace not reverse-domain, 1.0.0        | warning, namespace dropped           | plugin.extension-namespace-ignored |
 * | extension namespace not reverse-domain, 1.1.0        | rejected                             | plugin.extension-namespace-invalid |
 * | `name` breaks §5.5                                   | rejected                             | plugin.name-invalid |
 * | any other schema violation                           | rejected, one finding per violation  | plugin.schema-violation |
 * | `author` is `{}`                                     | info, field dropped                  | plugin.author-empty |
 * | `presentation.icon` string not plugin-relative       | warning, icon dropped                | plugin.icon-not-plugin-relative |
 *
 * No semver, URL, e-mail or SPDX check: §5.4 forbids rejecting on those. Pure.
 */
export function checkPluginManifest(value: unknown): PluginManifestCheck {
  if (!isRecord(value)) {
    return rejectedAt(undefined, [
      finding('plugin.not-object', at(PLUGIN_FILE, ''), `must be a JSON object, not ${kindOf(value)}`),
    ]);
  }
  if (!Object.hasOwn(value, '$schema')) {
    return rejectedAt(undefined, [
      finding('plugin.schema-missing', at(PLUGIN_FILE, '/$schema'), 'is required to select the Agent Plugins version'),
    ]);
  }
  const spec = specOfPluginSchemaId(value.$schema);
  if (spec === undefined) {
    const supported = SPEC_VERSIONS.join(', ');
    const what = typeof value.$schema === 'string' ? 'a string' : kindOf(value.$schema);
    return rejectedAt(undefined, [
      finding(
        'plugin.schema-unsupported',
        at(PLUGIN_FILE, '/$schema'),
        `is ${what} that names no supported plugin.json schema (supported versions: ${supported})`,
      ),
    ]);
  }

  const findings: Finding[] = [];
  const known = knownFields(spec);
  const manifest: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!known.has(key)) {
      findings.push(
        finding(
          'plugin.unknown-field',
          at(PLUGIN_FILE, `/${pointerToken(key)}`),
          `is not a plugin.json field in Agent Plugins ${spec} and is ignored`,
        ),
      );
    } else if (key === 'extensions' && !isRecord(field)) {
      findings.push(
        finding(
          'plugin.extensions-not-object',
          at(PLUGIN_FILE, '/extensions'),
          `must be an object, not ${kindOf(field)}; it is ignored`,
        ),
      );
    } else if (key === 'author' && isRecord(field) && Object.keys(field).length === 0) {
      findings.push(finding('plugin.author-empty', at(PLUGIN_FILE, '/author'), 'is empty and is omitted'));
    } else if (
      key === 'presentation' &&
      isRecord(field) &&
      typeof field.icon === 'string' &&
      !isPluginRelativePath(field.icon)
    ) {
      findings.push(
        finding(
          'plugin.icon-not-plugin-relative',
          at(PLUGIN_FILE, '/presentation/icon'),
          'is not a "./" path inside the plugin and is ignored',
        ),
      );
      const { icon: _ignored, ...rest } = field;
      manifest[key] = rest;
    } else {
      manifest[key] = field;
    }
  }

  let nameChecked = false;
  if (typeof manifest.name === 'string') {
    const problem = pluginNameProblem(manifest.name);
    if (problem !== undefined) findings.push(finding('plugin.name-invalid', at(PLUGIN_FILE, '/name'), problem));
    nameChecked = true;
  }
  const ignoredNamespaces = new Set<string>();
  if (isRecord(manifest.extensions)) {
    for (const namespace of Object.keys(manifest.extensions)) {
      if (isExtensionNamespace(namespace)) continue;
      const path = at(PLUGIN_FILE, `/extensions/${pointerToken(namespace)}`);
      // 1.0.0 §5.2 makes only schema violations fatal, and its schema puts no pattern on the
      // keys of extensions; no client implements such a namespace, so it ignores the entry
      // (§8.1, §11.1 item 3). The 1.1.0 draft's §5.2 makes every manifest violation fatal but
      // three it lists, and §8's reverse-domain MUST is not among them.
      if (spec === '1.0.0') {
        ignoredNamespaces.add(namespace);
        findings.push(
          finding(
            'plugin.extension-namespace-ignored',
            path,
            'is not a lower-case reverse-domain namespace such as com.example.client; no client implements it, so it is ignored',
          ),
        );
      } else {
        findings.push(
          finding(
            'plugin.extension-namespace-invalid',
            path,
            'is not a lower-case reverse-domain namespace such as com.example.client',
          ),
        );
      }
    }
  }

  // The schema sees the manifest with every namespace, ignored or not: a value that is not
  // an object is a schema violation (fatal) under any key. The validators are compiled at build
  // (scripts/validators.ts), so this compiles nothing.
  const validate = PLUGIN_VALIDATORS[spec];
  if (!validate(manifest)) {
    for (const error of validate.errors ?? []) {
      if (nameChecked && error.instancePath === '/name' && NAME_KEYWORDS.has(error.keyword)) continue;
      findings.push(schemaFinding(error));
    }
  }
  if (ignoredNamespaces.size > 0 && isRecord(manifest.extensions)) {
    // A new object: the input is not changed. fromEntries defines own properties, so a key such
    // as `__proto__` among the kept ones stays data.
    manifest.extensions = Object.fromEntries(
      Object.entries(manifest.extensions).filter(([namespace]) => !ignoredNamespaces.has(namespace)),
    );
  }

  const rejected = findings.some((f) => f.severity === 'error');
  return { spec, manifest: rejected ? undefined : manifest, rejected, findings: sortFindings(findings) };
}

/**
 * Checks that a parsed mcp.json targets the version plugin.json does (§7.2.1, §7.2.2, §10.1).
 * Any failure disables MCP for the plugin alone: the plugin and its other components still
 * load. The servers themselves are not checked here. Pure.
 */
export function checkMcpManifestVersion(pluginSpec: SpecVersion, mcpValue: unknown): McpVersionCheck {
  const disabled = (spec: SpecVersion | undefined, f: Finding): McpVersionCheck => ({
    spec,
    mcpDisabled: true,
    findings: [f],
  });
  if (!isRecord(mcpValue)) {
    return disabled(
      undefined,
      finding('mcp.not-object', at(MCP_FILE, ''), `must be a JSON object, not ${kindOf(mcpValue)}; MCP is disabled`),
    );
  }
  if (!Object.hasOwn(mcpValue, '$schema')) {
    return disabled(
      undefined,
      finding(
        'mcp.schema-missing',
        at(MCP_FILE, '/$schema'),
        'is required to select the Agent Plugins version; MCP is disabled',
      ),
    );
  }
  const spec = specOfMcpSchemaId(mcpValue.$schema);
  if (spec === undefined) {
    return disabled(
      undefined,
      finding(
        'mcp.schema-unsupported',
        at(MCP_FILE, '/$schema'),
        'names no supported mcp.json schema; MCP is disabled',
      ),
    );
  }
  if (spec !== pluginSpec) {
    return disabled(
      spec,
      finding(
        'mcp.spec-mismatch',
        at(MCP_FILE, '/$schema'),
        `targets Agent Plugins ${spec} but plugin.json targets ${pluginSpec}; MCP is disabled`,
      ),
    );
  }
  return { spec, mcpDisabled: false, findings: [] };
}
