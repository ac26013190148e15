import { minimatch } from '#libraries';
import { type PackageFile, SIDECAR, byteOrder } from '../bundle/include.js';
import type { AuthorConfig, McpServerConfig, PluginConfig } from '../config/types.js';
import { namespaceFolderProblem, splitExtensions } from '../extensions/index.js';
import type { UnmappedReason } from '../extensions/index.js';
import type { Finding } from '../findings.js';
import { buildServers } from '../mcp/build.js';
import { type McpServer, serverPath } from '../mcp/check.js';
import { DEFAULT_SPEC_VERSION, type SpecVersion } from '../schemas.js';
import { SKILL_FILE, removeProvenanceHeader } from '../skills/index.js';
import type { PackageReadLimits } from '../read/reader.js';
import { type PackageSource, loadPackageSource } from '../validate/core.js';
import type { LoadedPackage } from '../validate/load.js';
import { isRecord } from '../values.js';

/** One thing of the package the configuration cannot express, or carries only in part. */
export interface ImportReportEntry {
  /** A package path (`notes.md`, `com.example.tool/`), or a file and JSON pointer (`mcp.json#/mcpServers/x/cwd`). */
  path: string;
  reason: string;
}

export interface ImportedPlugin {
  /** The version plugin.json targets; undefined when it names none this package supports. */
  spec: SpecVersion | undefined;
  /** True when a conformant client rejects the plugin: then nothing is imported and `config` is undefined. */
  rejected: boolean;
  /** The configuration that builds the package again; undefined only when rejected. */
  config: PluginConfig | undefined;
  /**
   * The content root to build from, by path: `skills/<name>/…` with the provenance header taken
   * off SKILL.md, and every bundled root file and namespace folder file (which `config.include`
   * lists). Paths in byte order.
   */
  content: Map<string, PackageFile>;
  /** What has no equivalent in the configuration, or is carried only as a file; paths in byte order. */
  report: ImportReportEntry[];
  /** What loading the package found (validatePlugin's findings), sorted. */
  findings: Finding[];
}

const SPLIT_REASONS: Readonly<Record<UnmappedReason, string>> = {
  'unknown-namespace':
    'a namespace the configuration does not know: carried unchanged (files through config.include, data in config.extensions)',
  'no-equivalent': 'known extension content the configuration has no place for: carried unchanged',
  'not-in-layout': 'a file outside the layout of its namespace: carried unchanged through config.include',
  duplicate:
    'a second agent, command, rule or context document of the same name: carried unchanged through config.include',
};

const IGNORED_BY_CLIENT: ReadonlySet<string> = new Set([
  'plugin.unknown-field',
  'plugin.extensions-not-object',
  'plugin.icon-not-plugin-relative',
  'plugin.extension-namespace-ignored',
]);

/**
 * importPlugin of a package already loaded (loadPackage, loadPackageSource): no `node:`
 * import, so a web product can show what an import of an upload would produce.
 */
export function importLoaded(loaded: LoadedPackage): ImportedPlugin {
  const state: ImportState = { loaded, report: [], content: new Map() };
  if (loaded.rejected || loaded.manifest === undefined || loaded.spec === undefined) {
    state.report.push({
      path: 'plugin.json',
      reason: 'a conformant client rejects this plugin (see findings); nothing is imported',
    });
    return finishImport(state, undefined);
  }
  const config = configOf(loaded.manifest, loaded.spec);
  reportManifest(state, config);
  importSkills(state, config);
  importBundledFiles(state, loaded.manifest);
  includeBundledFiles(state, config);
  importServers(state, config);
  return finishImport(state, config);
}

/** One import in progress: the package as loaded, and the report and content root built from it so far. */
interface ImportState {
  readonly loaded: LoadedPackage;
  readonly report: ImportReportEntry[];
  readonly content: Map<string, PackageFile>;
}

/** The import's result: content and report in byte order of their paths. */
function finishImport(state: ImportState, config: PluginConfig | undefined): ImportedPlugin {
  const { loaded, content, report } = state;
  return {
    spec: loaded.spec,
    rejected: loaded.rejected,
    config,
    content: new Map([...content].sort(([a], [b]) => byteOrder(a, b))),
    report: report.sort((a, b) => byteOrder(a.path, b.path) || byteOrder(a.reason, b.reason)),
    findings: loaded.findings,
  };
}

/** What of plugin.json the configuration does not carry: a [plugin] block it cannot form, fields a client ignores. */
function reportManifest(state: ImportState, config: PluginConfig): void {
  const { loaded, report } = state;
  if (config.version === undefined || config.description === undefined) {
    const missing = [
      config.version === undefined ? 'version' : undefined,
      config.description === undefined ? 'description' : undefined,
    ]
      .filter(Boolean)
      .join(' and ');
    report.push({
      path: 'plugin.json',
      reason: `has no ${missing}: a [plugin] block needs a version and a description, so none can be formed; config holds the rest`,
    });
  }
  for (const f of loaded.manifestFindings) {
    if (IGNORED_BY_CLIENT.has(f.code))
      report.push({ path: f.path, reason: 'ignored by a conformant client; not imported' });
  }
}

/** Skills, as a client loads them: into the content root, SKILL.md without its provenance header. */
function importSkills(state: ImportState, config: PluginConfig): void {
  const { loaded, report, content } = state;
  let withHeader = 0;
  const withoutHeader: string[] = [];
  for (const [name, files] of loaded.skills) {
    for (const [path, file] of files) {
      if (path !== SKILL_FILE) {
        content.set(`skills/${name}/${path}`, file);
        continue;
      }
      const removed = removeProvenanceHeader(file.bytes);
      if (removed.header === undefined) withoutHeader.push(name);
      else withHeader += 1;
      content.set(`skills/${name}/${path}`, { ...file, bytes: removed.bytes });
    }
  }
  if (withHeader === 0 && withoutHeader.length > 0) config.provenanceHeaders = false;
  else
    for (const name of withoutHeader)
      report.push({
        path: `skills/${name}/${SKILL_FILE}`,
        reason: 'has no provenance header while other skills do: a build adds one',
      });
  if (loaded.skillsDisabled)
    report.push({
      path: 'skills/',
      reason: 'the skills component is invalid for a conformant client (see findings); no skill is imported',
    });
  for (const name of loaded.skippedSkills)
    report.push({
      path: `skills/${name}/`,
      reason: 'a conformant client skips this skill (see findings); not imported',
    });
  for (const path of loaded.looseSkillPaths)
    report.push({
      path,
      reason: 'under skills/ but in no skill folder: no client reads it and a build never ships it; not imported',
    });
}

/**
 * Bundled root files and namespace folders: copied into the content root (includeBundledFiles
 * includes them again); reported, with what splitExtensions finds, and the paths a client is denied.
 */
function importBundledFiles(state: ImportState, manifest: Record<string, unknown>): void {
  const { loaded, report, content } = state;
  const namespaceFiles = new Map<string, PackageFile>();
  const rootFiles: string[] = [];
  for (const [path, file] of loaded.other) {
    if (path === SIDECAR) continue;
    const slash = path.indexOf('/');
    if (slash >= 0 && namespaceFolderProblem(path.slice(0, slash)) === undefined) namespaceFiles.set(path, file);
    else rootFiles.push(path);
    content.set(path, file);
  }
  for (const path of rootFiles)
    report.push({
      path,
      reason: 'a bundled root file: copied to the content root and shipped again through config.include',
    });
  const split = splitExtensions(namespaceFiles, isRecord(manifest.extensions) ? manifest.extensions : undefined);
  for (const entry of split.report) report.push({ path: entry.path, reason: SPLIT_REASONS[entry.reason] });
  for (const item of split.imported) {
    report.push({
      path: item.path,
      reason: `the ${item.kind} ${item.name}: the configuration has no ${item.kind}s, so it is carried through config.include`,
    });
  }
  for (const path of loaded.denied)
    report.push({ path, reason: 'a conformant client is denied this path (see findings); not imported' });
}

/** config.include: one literal glob for each file of the content root outside skills/. */
function includeBundledFiles(state: ImportState, config: PluginConfig): void {
  const { report, content } = state;
  const included = [...content.keys()].filter((path) => !path.startsWith('skills/'));
  const include: string[] = [];
  for (const path of included) {
    const glob = literalGlob(path);
    if (glob === undefined)
      report.push({ path, reason: 'its name cannot be written as an include glob; a build does not ship it again' });
    else include.push(glob);
  }
  if (include.length > 0) config.include = include;
}

/** MCP servers, as a client loads them, into config.mcp; what a rebuild would not package again is reported. */
function importServers(state: ImportState, config: PluginConfig): void {
  const { loaded, report, content } = state;
  if (loaded.mcpDisabled)
    report.push({
      path: 'mcp.json',
      reason: 'a conformant client disables MCP for this plugin (see findings); no server is imported',
    });
  for (const name of loaded.skippedServers)
    report.push({
      path: serverPath(name),
      reason: 'a conformant client skips this server (see findings); not imported',
    });
  const servers = Object.entries(loaded.servers).map(([name, server]) => serverConfig(name, server));
  for (const server of servers) {
    if (server.cwd !== undefined) {
      report.push({
        path: `${serverPath(server.name)}/cwd`,
        reason:
          'a server cwd: kept in config.mcp for the plugin, but a project-wide server configuration has no working directory',
      });
    }
  }
  if (servers.length > 0) {
    config.mcp = servers;
    // What a build would refuse although a client loads it (a ${VAR} a client leaves literal,
    // a credential header): imported as it is, and said here, since a rebuild drops it.
    const rebuilt = buildServers(servers, { files: new Set(content.keys()) });
    for (const server of servers) {
      if (!Object.hasOwn(rebuilt.servers, server.name)) {
        report.push({
          path: serverPath(server.name),
          reason:
            'kept in config.mcp, but a build refuses this server (buildServers reports why): it is not packaged again',
        });
      }
    }
  }
}

/** The configuration plugin.json describes, fields in the order a build writes them. */
function configOf(manifest: Record<string, unknown>, spec: SpecVersion): PluginConfig {
  const config: PluginConfig = { name: manifest.name as string };
  for (const key of ['version', 'description', 'homepage', 'repository', 'license'] as const) {
    const value = manifest[key];
    if (typeof value === 'string') config[key] = value;
  }
  if (Array.isArray(manifest.keywords))
    config.keywords = manifest.keywords.filter((k): k is string => typeof k === 'string');
  if (isRecord(manifest.author)) {
    // Key order is the manifest's: a build writes the author's fields in the order given.
    const author: AuthorConfig = {};
    for (const [key, value] of Object.entries(manifest.author)) {
      if ((key === 'name' || key === 'email' || key === 'url') && typeof value === 'string') author[key] = value;
    }
    if (Object.keys(author).length > 0) config.author = author;
  }
  if (spec !== DEFAULT_SPEC_VERSION) config.spec = spec;
  if (isRecord(manifest.presentation)) config.presentation = manifest.presentation;
  if (isRecord(manifest.extensions)) config.extensions = manifest.extensions;
  return config;
}

function serverConfig(name: string, server: McpServer): McpServerConfig {
  if (server.type === 'stdio') {
    const config: McpServerConfig = { name, command: server.command };
    if (server.args !== undefined) config.args = server.args;
    if (server.env !== undefined) config.env = server.env;
    if (server.cwd !== undefined) config.cwd = server.cwd;
    return config;
  }
  const config: McpServerConfig = { name, transport: server.type === 'sse' ? 'sse' : 'http', url: server.url };
  if (server.headers !== undefined) config.headers = server.headers;
  return config;
}

const MATCH_OPTIONS = { dot: true, nonegate: true, nocomment: true } as const;

/**
 * An include glob that matches `path` (as selectIncluded matches it), or undefined. Escaped
 * with character classes rather than backslashes, which an include glob may not hold.
 */
function literalGlob(path: string): string | undefined {
  const escaped = minimatch().escape(path, { windowsPathsNoEscape: true });
  // minimatch expands braces before it reads classes, so "[{]" does not protect a brace.
  const glob = escaped.replace(/[{}]/g, '?');
  return minimatch().minimatch(path, glob, MATCH_OPTIONS) ? glob : undefined;
}

/**
 * Imports a package held in memory (a tree, or an upload read by readZip, readTarGz or
 * readUploadedFiles) as importPlugin imports a folder: the configuration, the content and
 * the report of what has no place in a configuration. No Node API is used, so a web product
 * can show what an import would produce before anything is written.
 *
 * @example
 * const imported = await importPlugin(readZip(bytes)); // from '@agentproto/agent-plugins/browser'
 * for (const entry of imported.report) console.log(`${entry.path}: ${entry.reason}`);
 *
 * @throws Nothing for a bad package or upload: a rejected one gives `rejected` and its findings.
 */
export async function importPackage(source: PackageSource, limits: PackageReadLimits = {}): Promise<ImportedPlugin> {
  return importLoaded(await loadPackageSource(source, limits));
}
