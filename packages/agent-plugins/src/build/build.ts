import { join } from 'node:path';
import { selectIncluded, type PackageFile, SIDECAR, byteOrder } from '../bundle/include.js';
import { shareResources } from '../bundle/shared.js';
import type { PluginConfig } from '../config/types.js';
import { type Finding, sortFindings } from '../findings.js';
import { extensionData } from '../extensions/data.js';
import { checkPluginManifest } from '../manifest.js';
import { buildServers } from '../mcp/build.js';
import { DEFAULT_SPEC_VERSION, type SpecVersion, mcpSchemaId, pluginSchemaId } from '../schemas.js';
import { addProvenanceHeader, checkSkill, selectSkills } from '../skills/index.js';
import { renderJson, sortedKeys } from './render.js';
import { renderSidecar } from './sidecar.js';
import { readSourceTree } from './source.js';

export interface BuildOptions {
  /** The Agent Plugins version to write; the configuration's `spec`, else 1.0.0. */
  spec?: SpecVersion;
  /** Where skills, included files and shared resources are read from (absolute). */
  contentRoot: string;
}

/** A package in memory: every file by path, and what the build found. */
export interface PluginPackage {
  spec: SpecVersion;
  /** Paths in byte order; the sidecar last written covers every other file. */
  files: Map<string, PackageFile>;
  /** Sorted with sortFindings. */
  findings: Finding[];
  /** True when plugin.json itself is invalid: a client would load nothing of this package. */
  rejected: boolean;
}

const GENERATOR = 'agentproto';

/**
 * Builds the package a configuration describes, in memory: plugin.json, the skills that
 * follow the Agent Skills rules (with a provenance header unless `provenanceHeaders` is
 * false), shared resources copied into each skill, included files, mcp.json with every
 * server that can be packaged, and the sidecar of content hashes. Whatever a conformant
 * client would skip is left out and reported; nothing is written to disk.
 */
export async function buildPlugin(config: PluginConfig, options: BuildOptions): Promise<PluginPackage> {
  const spec = options.spec ?? config.spec ?? DEFAULT_SPEC_VERSION;
  const findings: Finding[] = [];
  const files = new Map<string, PackageFile>();

  // Extension data the way extensionData normalizes it: an invalid namespace is left out
  // (reported), com.openai's keys sorted, other namespaces kept in their own order.
  const extensions = config.extensions === undefined ? undefined : extensionData(config.extensions);
  if (extensions) findings.push(...extensions.findings);
  const manifest = checkPluginManifest(manifestOf(config, spec, extensions?.extensions));
  findings.push(...manifest.findings);
  if (manifest.manifest) files.set('plugin.json', { bytes: renderJson(manifest.manifest), mode: 0o644 });

  const source = await readSourceTree(options.contentRoot);
  const skillsDir = (config.skills ?? 'skills').replace(/\/+$/, '');
  const skillFiles = await skillsOf(source, skillsDir, config, findings);
  for (const [name, own] of skillFiles) for (const [path, file] of own) files.set(`skills/${name}/${path}`, file);

  const included = selectIncluded(
    source.paths.filter((path) => path !== skillsDir && !path.startsWith(`${skillsDir}/`)),
    config.include ?? [],
  );
  findings.push(...included.findings);
  for (const path of included.selected) files.set(path, await source.read(path));

  if (config.mcp && config.mcp.length > 0) {
    const servers = buildServers(config.mcp, { files: new Set(files.keys()) });
    findings.push(...servers.findings);
    if (Object.keys(servers.servers).length > 0) {
      files.set('mcp.json', { bytes: renderJson({ $schema: mcpSchemaId(spec), mcpServers: servers.servers }), mode: 0o644 });
    }
  }

  const ordered = new Map([...files.entries()].sort(([a], [b]) => byteOrder(a, b)));
  ordered.set(SIDECAR, renderSidecar(spec, ordered));
  return { spec, files: ordered, findings: sortFindings(findings), rejected: manifest.rejected };
}

/** plugin.json as the configuration says, fields in the schema's order, empty ones left out. */
function manifestOf(config: PluginConfig, spec: SpecVersion, extensions: Record<string, unknown> | undefined): Record<string, unknown> {
  const author = config.author && Object.fromEntries(Object.entries(config.author).filter(([, value]) => value !== undefined && value !== ''));
  const entries: Array<[string, unknown]> = [
    ['$schema', pluginSchemaId(spec)],
    ['name', config.name],
    ['presentation', config.presentation === undefined ? undefined : sortedKeys(config.presentation)],
    ['version', config.version],
    ['description', config.description],
    ['author', author],
    ['homepage', config.homepage],
    ['repository', config.repository],
    ['license', config.license],
    ['keywords', config.keywords],
    ['extensions', extensions],
  ];
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
}

/**
 * The skills under `<contentRoot>/<skillsDir>/<name>/` that pass the Agent Skills rules,
 * each with all its files; shared resources are copied into each. A skill that breaks a
 * rule is reported and left out whole.
 */
async function skillsOf(
  source: Awaited<ReturnType<typeof readSourceTree>>,
  skillsDir: string,
  config: PluginConfig,
  findings: Finding[],
): Promise<Map<string, Map<string, PackageFile>>> {
  const prefix = `${skillsDir}/`;
  const under = source.paths.filter((path) => path.startsWith(prefix)).map((path) => `skills/${path.slice(prefix.length)}`);
  const layout = selectSkills(under);
  findings.push(...layout.findings);
  let skills = new Map<string, Map<string, PackageFile>>();
  for (const name of layout.skills) {
    const own = new Map<string, PackageFile>();
    for (const path of source.paths.filter((p) => p.startsWith(`${prefix}${name}/`))) own.set(path.slice(prefix.length + name.length + 1), await source.read(path));
    const skillMd = own.get('SKILL.md');
    if (!skillMd) continue;
    const check = checkSkill(name, skillMd.bytes);
    findings.push(...check.findings);
    if (!check.accepted) continue;
    skills.set(name, own);
  }
  for (const folder of config.sharedResources ?? []) {
    const name = folder.replace(/\/+$/, '');
    const shared = new Map<string, PackageFile>();
    for (const path of source.paths.filter((p) => p.startsWith(`${name}/`))) shared.set(path.slice(name.length + 1), await source.read(path));
    const result = shareResources(skills, name, shared, { skillsDir });
    findings.push(...result.findings);
    skills = result.skills;
  }
  if (config.provenanceHeaders !== false) {
    for (const [name, own] of skills) {
      const skillMd = own.get('SKILL.md')!;
      own.set('SKILL.md', { ...skillMd, bytes: addProvenanceHeader(skillMd.bytes, { generator: GENERATOR, sourcePath: join(skillsDir, name, 'SKILL.md') }) });
    }
  }
  return skills;
}
