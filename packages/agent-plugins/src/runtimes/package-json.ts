import { parseUntrustedJson } from '@agentproto/documents';
import { withoutBom } from '../text.js';
import { byteOrder } from '../bundle/include.js';
import type { AuthorConfig, PluginConfig } from '../config/types.js';
import { packagePathProblem, setOwn } from '../extensions/paths.js';
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { isPlainObject } from '../values.js';
import { RUNTIME_FINDING_CODES } from './codes.js';

export const PACKAGE_JSON = 'package.json';

/** The OpenCode runtime's dependency, and its range when [plugin] opencode_dependency is unset (the seed). */
const OPENCODE_PLUGIN_PACKAGE = '@opencode/plugin';
export const DEFAULT_OPENCODE_DEPENDENCY = '^2.0.26';

/** Where the Pi package's skills live when [plugin.pi] skills_dir is unset (the seed). */
export const DEFAULT_PI_SKILLS_DIR = '.pi/skills';

/**
 * The keys the product owns in a Pi package.json under package_json = "merge" (the seed), in
 * the order they are written. Every other key belongs to the project.
 */
export const PI_OWNED_KEYS = Object.freeze([
  'name',
  'version',
  'description',
  'keywords',
  'author',
  'repository',
  'files',
  'pi',
] as const);

/**
 * What the OpenCode and Pi package.json is derived from: the manifest's identity fields, the
 * package paths, and the [plugin] keys that tune the file. A resolved PluginConfig fits
 * `config` as it is.
 */
export interface RuntimePackageInput {
  /** The plugin name; a valid plugin name (§5.5) is a valid npm package name. */
  name: string;
  /** Resolved already (version_from is read by the caller). */
  version: string;
  description?: string;
  /** Written as an object; an author with no field is left out, as in plugin.json. */
  author?: AuthorConfig;
  repository?: string;
  /** In the caller's order; an empty list is left out. */
  keywords?: readonly string[];
  license?: string;
  /**
   * Every path the package ships, relative to the package root and "/"-separated (plugin.json,
   * skills/x/SKILL.md, …). "files" lists their top-level entries: npm ships a listed folder
   * with everything below it, so the list does not change with each skill file.
   */
  paths: readonly string[];
  config?: Pick<PluginConfig, 'packageManager' | 'opencodeDependency' | 'pi'>;
}

export interface RuntimePackageJson {
  /** Two-space JSON with a trailing newline. */
  bytes: Uint8Array;
  findings: Finding[];
}

// The order keys are written in when the product owns the whole file: identity first, then
// what the package ships, then what it needs.
const KEY_ORDER = [
  'name',
  'version',
  'description',
  'keywords',
  'license',
  'author',
  'repository',
  'files',
  'pi',
  'dependencies',
  'packageManager',
] as const;

function render(value: Record<string, unknown>): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);
}

function authorOf(author: AuthorConfig | undefined): Record<string, string> | undefined {
  if (author === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const key of ['name', 'email', 'url'] as const) {
    const value = author[key];
    if (value !== undefined) out[key] = value;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function filesOf(paths: readonly string[], findings: Finding[]): string[] {
  const top = new Set<string>();
  for (const [index, path] of paths.entries()) {
    const problem = packagePathProblem(path);
    if (problem !== undefined) {
      findings.push(
        findingFrom(
          RUNTIME_FINDING_CODES,
          'runtime.file-path-invalid',
          `${PACKAGE_JSON}#/files`,
          `package path ${index + 1} ${problem}; it is not listed`,
        ),
      );
      continue;
    }
    const first = path.split('/')[0] as string;
    // npm always ships package.json; listing it would only be noise.
    if (first !== PACKAGE_JSON) top.add(first);
  }
  return [...top].sort(byteOrder);
}

/** The identity and files keys both runtimes share, unordered. */
function common(input: RuntimePackageInput, findings: Finding[]): Record<string, unknown> {
  return {
    name: input.name,
    version: input.version,
    description: input.description,
    keywords: input.keywords !== undefined && input.keywords.length > 0 ? [...input.keywords] : undefined,
    license: input.license,
    author: authorOf(input.author),
    repository: input.repository,
    files: filesOf(input.paths, findings),
    packageManager: input.config?.packageManager,
  };
}

/** `fields` in KEY_ORDER, undefined values left out. */
function ordered(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of KEY_ORDER) if (fields[key] !== undefined) out[key] = fields[key];
  return out;
}

/**
 * The OpenCode runtime's root package.json, fully owned (verify compares it byte for byte):
 *
 * | Key                              | From                                                   |
 * |----------------------------------|--------------------------------------------------------|
 * | name, version, description, keywords, license, author, repository | the manifest     |
 * | files                            | the top-level entries of `paths`, byte order           |
 * | dependencies["@opencode/plugin"] | config.opencodeDependency, else ^2.0.26                |
 * | packageManager                   | config.packageManager; left out when unset             |
 *
 * The seed is silent on type, main and exports, and none is written: the package holds no
 * JavaScript module, and without exports every file stays resolvable (`<name>/plugin.json`),
 * which is all a client locating the plugin root needs. The same input gives the same bytes.
 */
export function opencodePackageJson(input: RuntimePackageInput): RuntimePackageJson {
  const findings: Finding[] = [];
  const fields = common(input, findings);
  fields.dependencies = { [OPENCODE_PLUGIN_PACKAGE]: input.config?.opencodeDependency ?? DEFAULT_OPENCODE_DEPENDENCY };
  return { bytes: render(ordered(fields)), findings: sortFindings(findings) };
}

function skillsDirOf(dir: string | undefined, findings: Finding[]): string {
  if (dir === undefined) return `./${DEFAULT_PI_SKILLS_DIR}`;
  const bare = dir.replace(/^\.\//, '').replace(/\/+$/, '');
  const problem = packagePathProblem(bare);
  if (problem === undefined) return `./${bare}`;
  findings.push(
    findingFrom(
      RUNTIME_FINDING_CODES,
      'runtime.pi-skills-dir-invalid',
      'plugin#/pi/skillsDir',
      `skills_dir ${problem}; ${DEFAULT_PI_SKILLS_DIR} was written instead`,
    ),
  );
  return `./${DEFAULT_PI_SKILLS_DIR}`;
}

function parseObject(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    // Bytes that are not UTF-8 are unreadable, not silently replaced; a BOM is dropped. The
    // project's package.json is bounded like every untrusted document (size, depth, values).
    const value: unknown = parseUntrustedJson(withoutBom(bytes), { source: 'package.json' });
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Pi runtime's root package.json. Same keys as OpenCode's except the dependency, plus
 * `pi: { skills: ["./<skills dir>"] }`, where the skills dir is config.pi.skillsDir or
 * `.pi/skills` (set it to `skills` to reuse the tree the other runtimes write).
 *
 * config.pi.packageJson = "own" (the default), or "merge" with no `existing` file: the whole
 * file is written, as for OpenCode.
 *
 * "merge" with an `existing` file: only PI_OWNED_KEYS are written. An owned key the file has
 * is updated in place; an owned key the manifest does not set is removed (the manifest is its
 * source); an owned key the file lacks is inserted right after the nearest owned key before it
 * in PI_OWNED_KEYS order, or first when there is none, so owned keys gather at the top and
 * no project key moves. Every other key (scripts, devDependencies, packageManager, license, …)
 * keeps its value and its place. The file is re-rendered as two-space JSON; integer-like keys,
 * which JavaScript orders first, are the one place the existing order cannot be kept. An
 * existing file that is not a UTF-8 JSON object is returned unchanged, with an error.
 */
export function piPackageJson(input: RuntimePackageInput, existing?: Uint8Array): RuntimePackageJson {
  const findings: Finding[] = [];
  const fields = common(input, findings);
  fields.pi = { skills: [skillsDirOf(input.config?.pi?.skillsDir, findings)] };
  const owned = ordered(fields);
  if (input.config?.pi?.packageJson !== 'merge' || existing === undefined)
    return { bytes: render(owned), findings: sortFindings(findings) };

  const current = parseObject(existing);
  if (current === undefined) {
    findings.push(
      findingFrom(
        RUNTIME_FINDING_CODES,
        'runtime.package-json-unreadable',
        PACKAGE_JSON,
        'is not a UTF-8 JSON object; nothing was merged into it',
      ),
    );
    return { bytes: existing, findings: sortFindings(findings) };
  }
  const entries: [string, unknown][] = Object.entries(current);
  for (const [rank, key] of PI_OWNED_KEYS.entries()) {
    const at = entries.findIndex(([name]) => name === key);
    const value = owned[key];
    if (value === undefined) {
      if (at >= 0) entries.splice(at, 1);
    } else if (at >= 0) {
      entries[at] = [key, value];
    } else {
      let after = -1;
      for (const before of PI_OWNED_KEYS.slice(0, rank).reverse()) {
        after = entries.findIndex(([name]) => name === before);
        if (after >= 0) break;
      }
      entries.splice(after + 1, 0, [key, value]);
    }
  }
  const merged: Record<string, unknown> = {};
  for (const [key, value] of entries) setOwn(merged, key, value);
  return { bytes: render(merged), findings: sortFindings(findings) };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * Where an on-disk package.json (`actual`, undefined when missing) drifted from what the
 * product writes (`expected`), as finding paths:
 *
 * - "own": any byte difference, even whitespace, is drift of the whole file: `["package.json"]`.
 * - "merge": only PI_OWNED_KEYS are compared, each by its JSON value (key order inside a value
 *   counts, since the product would rewrite it): `["package.json#/version", …]` in byte order.
 *   A missing or unreadable file is drift of the whole file.
 *
 * An empty list means no drift.
 */
export function packageJsonDrift(
  expected: Uint8Array,
  actual: Uint8Array | undefined,
  mode: 'own' | 'merge',
): string[] {
  if (actual === undefined) return [PACKAGE_JSON];
  if (mode === 'own') return sameBytes(expected, actual) ? [] : [PACKAGE_JSON];
  const want = parseObject(expected);
  const have = parseObject(actual);
  if (want === undefined || have === undefined) return sameBytes(expected, actual) ? [] : [PACKAGE_JSON];
  const value = (object: Record<string, unknown>, key: string): string | undefined =>
    Object.hasOwn(object, key) ? JSON.stringify(object[key]) : undefined;
  return PI_OWNED_KEYS.filter((key) => value(want, key) !== value(have, key))
    .map((key) => `${PACKAGE_JSON}#/${key}`)
    .sort(byteOrder);
}
