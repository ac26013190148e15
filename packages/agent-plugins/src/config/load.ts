import { realpath } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  DOCUMENT_LIMITS,
  DocumentError,
  type DocumentFormat,
  parseUntrustedJson,
  parseUntrustedToml,
  parseUntrustedYaml,
  readBoundedFile,
} from '@agentproto/documents';
import { includeGlobProblem } from '../bundle/include.js';
import { PluginConfigError, PluginContentRootError } from './errors.js';
import { documentProblem, pluginProblem, SNAKE } from './schema.js';
import type { PluginConfig } from './types.js';

/** A configuration file, loaded: the plugin's settings and the folders they are relative to. */
export interface LoadedPluginConfig {
  /** The plugin's settings, checked, in camelCase, `versionFrom` resolved into `version`. */
  config: PluginConfig;
  /** The folder relative paths of the configuration are taken from. */
  baseDir: string;
  /** The content root, absolute. */
  contentRoot: string;
}

/** What loadPluginConfig lets a configuration file do. */
export interface LoadPluginConfigOptions {
  /**
   * Let `content_root` name a folder outside the configuration's folder. Off by default: a
   * configuration file comes from the project, and a project that could point the content
   * root anywhere (`../../../../etc`) would have the build package host files. Only the host,
   * in code, can allow it; no key of the file can.
   */
  allowContentRootOutside?: boolean;
}

/**
 * Reads a plugin configuration from a JSON, YAML or TOML file (by extension). The plugin is
 * the `plugin` table when there is one (the seed's `[plugin]`), else the whole document;
 * servers come from `plugin.mcp` or a top-level `mcp_servers`. `versionFrom` is resolved
 * into `version`. Every problem is a PluginConfigError naming the file and the key.
 * The document is validated through PLUGIN_CONFIG_SCHEMA (see CONFIGURATION.md for every key).
 *
 * @example
 * const { config, contentRoot } = await loadPluginConfig('plugin.toml');
 * const built = await buildPlugin(config, { contentRoot });
 *
 * @throws PluginConfigError `PLUGIN_CONFIG_INVALID`: not .json/.yaml/.yml/.toml, unreadable, over
 * the size limit, not parsable, or a key the schema or a rule refuses; `file` and `key` name it
 * (`mcp[0].transport`), and the message never quotes a value.
 * @throws PluginContentRootError `PLUGIN_CONTENT_ROOT_OUTSIDE`: `contentRoot` leaves the
 * configuration's folder (as written, or once links are resolved) and the host did not allow it.
 */
export async function loadPluginConfig(
  file: string,
  options: LoadPluginConfigOptions = {},
): Promise<LoadedPluginConfig> {
  const path = resolve(file);
  const format = FORMAT_OF_EXTENSION[extname(path).toLowerCase()];
  if (format === undefined) throw new PluginConfigError(path, '', 'is not .json, .yaml, .yml or .toml');
  const document = await readDocument(
    path,
    format,
    (reason, cause) => new PluginConfigError(path, '', reason, { cause }),
  );
  if (!isObject(document)) throw new PluginConfigError(path, '', 'must hold a table (an object)');
  const problem = documentProblem(document);
  if (problem !== undefined) throw new PluginConfigError(path, problem.key, problem.reason);
  const table = isObject(document.plugin) ? document.plugin : document;
  const raw: Record<string, unknown> = { ...table };
  if (raw.mcp === undefined && Array.isArray(document.mcp_servers)) raw.mcp = document.mcp_servers;
  if (table === document) {
    delete raw.mcp_servers;
    delete raw.$schema;
  }
  const config = normalizePluginConfig(raw, path);
  const baseDir = dirname(path);
  if (config.versionFrom !== undefined) {
    if (config.version !== undefined)
      throw new PluginConfigError(path, 'versionFrom', 'and version are both set; keep one');
    config.version = await versionFrom(join(baseDir, config.versionFrom), path);
  }
  const contentRoot = resolve(baseDir, config.contentRoot ?? '.');
  if (options.allowContentRootOutside !== true) await assertContentRootInside(path, baseDir, contentRoot);
  return { config, baseDir, contentRoot };
}

/**
 * The content root must be the configuration's folder or below it, both as written and once
 * links are resolved: `content = "./shared"` where shared is a link to /etc leaves the
 * project as surely as `../../etc` does. A content root that does not exist yet is judged as
 * written (a build then finds no files in it); any link on its way is judged where it leads.
 */
async function assertContentRootInside(file: string, baseDir: string, contentRoot: string): Promise<void> {
  if (!isInside(baseDir, contentRoot)) throw new PluginContentRootError(file, baseDir, contentRoot, 'as written');
  const realBase = await realpath(baseDir);
  const realRoot = await realpath(contentRoot).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new PluginConfigError(file, 'contentRoot', `cannot be resolved (${error.code ?? 'error'})`, { cause: error });
  });
  if (realRoot !== undefined && !isInside(realBase, realRoot))
    throw new PluginContentRootError(file, baseDir, contentRoot, 'once links are resolved');
}

function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

const FORMAT_OF_EXTENSION: Readonly<Record<string, DocumentFormat>> = {
  '.json': 'json',
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.toml': 'toml',
};

/**
 * A configuration or version file, read and parsed under the shared rules for documents from
 * strangers (a plugin's project is one): at most DOCUMENT_LIMITS.maxBytes are read, nesting
 * and alias expansion are bounded before and while parsing, so a hostile file is a
 * PluginConfigError (its cause a DocumentError with a stable code), never an exhausted heap.
 * The message holds the parser's code and position, never the file's text.
 */
async function readDocument(
  path: string,
  format: DocumentFormat,
  fail: (reason: string, cause: unknown) => PluginConfigError,
): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedFile(path, DOCUMENT_LIMITS.maxBytes, format);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'DOCUMENT_TOO_LARGE')
      throw fail(`is over the ${DOCUMENT_LIMITS.maxBytes}-byte limit for a configuration`, error);
    throw fail(`cannot be read (${code ?? 'error'})`, error);
  }
  try {
    const options = { source: path };
    return format === 'toml'
      ? parseUntrustedToml(bytes, options)
      : format === 'yaml'
        ? parseUntrustedYaml(bytes, options)
        : parseUntrustedJson(bytes, options);
  } catch (error) {
    throw fail(error instanceof DocumentError ? `does not parse: ${error.detail}` : 'does not parse', error);
  }
}

/**
 * A configuration object, checked and in camelCase: for configurations built in code as
 * much as for files. Unknown keys are refused (a typo would otherwise silently drop a
 * setting); include globs that leave the content root are refused here, at load.
 */
export function normalizePluginConfig(raw: Record<string, unknown>, source = 'plugin config'): PluginConfig {
  // A host may hand over whatever it parsed (a request body, `null`): refused as a config
  // file holding anything but a table is, not walked into a TypeError.
  if (!isObject(raw)) throw new PluginConfigError(source, '', 'must hold a table (an object)');
  const value = camelCase(raw, source, '');
  // Types, required keys, unknown keys and allowed values: the published schema says them,
  // and editors check the same file against it. What a schema cannot say follows in code.
  const problem = pluginProblem(value);
  if (problem !== undefined) throw new PluginConfigError(source, problem.key, problem.reason);
  for (const [index, glob] of ((value.include as string[] | undefined) ?? []).entries()) {
    const globProblem = includeGlobProblem(glob);
    if (globProblem !== undefined)
      throw new PluginConfigError(source, `include[${index}]`, `${globProblem}: globs stay inside the content root`);
  }
  for (const [index, folder] of ((value.sharedResources as string[] | undefined) ?? []).entries()) {
    if (isAbsolute(folder) || folder.split(/[\\/]/).includes('..') || folder === '') {
      throw new PluginConfigError(source, `sharedResources[${index}]`, 'must be a folder inside the content root');
    }
  }
  const conflict = runtimesConflict(value as Pick<PluginConfig, 'runtimes' | 'pi'>);
  if (conflict !== undefined) throw new PluginConfigError(source, 'pi.packageJson', conflict);
  return value as unknown as PluginConfig;
}

/**
 * Why the runtimes cannot share one package.json, or undefined when they can. OpenCode owns
 * the whole file; Pi's "merge" leaves part of it to the project. Both cannot hold, and
 * picking one silently would either overwrite the project's keys or leave OpenCode's
 * unchecked, so the combination is refused. Runtime names other than opencode and pi are
 * another tool's business and play no part.
 */
export function runtimesConflict(config: Pick<PluginConfig, 'runtimes' | 'pi'>): string | undefined {
  const runtimes = config.runtimes ?? [];
  if (runtimes.includes('opencode') && runtimes.includes('pi') && config.pi?.packageJson === 'merge') {
    return 'is "merge", but the opencode runtime owns the whole package.json the pi runtime shares; use "own" or drop one runtime';
  }
  return undefined;
}

/** Keys in the seed's snake_case become camelCase, one level deep in `pi`; both spellings of one key are refused. */
function camelCase(raw: Record<string, unknown>, source: string, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    // Own spellings only: `SNAKE.constructor` would be Object itself. And `__proto__` (an own
    // key as JSON.parse makes it) would set `out`'s prototype instead of a setting: refused
    // here by its name, as any other unknown key is below.
    if (key === '__proto__') throw new PluginConfigError(source, `${prefix}${key}`, 'is not a plugin setting');
    const name = Object.hasOwn(SNAKE, key) ? SNAKE[key]! : key;
    if (Object.hasOwn(out, name))
      throw new PluginConfigError(source, `${prefix}${name}`, `is set twice (as ${key} and ${name})`);
    out[name] = name === 'pi' && isObject(value) ? camelCase(value, source, 'pi.') : value;
  }
  return out;
}

/** The version a package.json, pyproject.toml ([project] or [tool.poetry]) or Cargo.toml ([package]) declares. */
async function versionFrom(path: string, source: string): Promise<string> {
  const base = path.split(/[\\/]/).pop() ?? '';
  if (base !== 'package.json' && base !== 'pyproject.toml' && base !== 'Cargo.toml') {
    throw new PluginConfigError(source, 'versionFrom', 'must name a package.json, pyproject.toml or Cargo.toml');
  }
  const doc = (await readDocument(
    path,
    base === 'package.json' ? 'json' : 'toml',
    (reason, cause) =>
      // "cannot be read" keeps its old wording: the file named may simply be missing.
      new PluginConfigError(
        source,
        'versionFrom',
        reason.startsWith('cannot be read') ? `names ${path}, which cannot be read` : `${path} ${reason}`,
        { cause },
      ),
  )) as {
    version?: unknown;
    project?: { version?: unknown };
    tool?: { poetry?: { version?: unknown } };
    package?: { version?: unknown };
    workspace?: { package?: { version?: unknown } };
  } | null;
  let version: unknown;
  if (base === 'package.json') version = doc?.version;
  else if (base === 'pyproject.toml') version = doc?.project?.version ?? doc?.tool?.poetry?.version;
  else {
    if (isObject(doc?.package?.version)) {
      throw new PluginConfigError(
        source,
        'versionFrom',
        `${path} inherits its version from the workspace; name the workspace's Cargo.toml or set version`,
      );
    }
    version = doc?.package?.version ?? doc?.workspace?.package?.version;
  }
  if (typeof version !== 'string' || version === '')
    throw new PluginConfigError(source, 'versionFrom', `${path} declares no version`);
  return version;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
