import { join } from 'node:path';
import { selectIncluded, type PackageFile, SIDECAR, byteOrder } from '../bundle/include.js';
import { shareResources } from '../bundle/shared.js';
import { PluginConfigError } from '../config/errors.js';
import { runtimesConflict } from '../config/load.js';
import type { PluginConfig } from '../config/types.js';
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { extensionData, sortKeysDeep } from '../extensions/data.js';
import { extensionFiles } from '../extensions/files.js';
import { packagePathProblem } from '../extensions/paths.js';
import { checkPluginManifest, isExtensionNamespace } from '../manifest.js';
import { buildServers } from '../mcp/build.js';
import { scanManifestSecrets } from '../secrets/scan.js';
import { RUNTIME_FINDING_CODES } from '../runtimes/codes.js';
import {
  DEFAULT_PI_SKILLS_DIR,
  PACKAGE_JSON,
  type RuntimePackageInput,
  opencodePackageJson,
  piPackageJson,
} from '../runtimes/package-json.js';
import { DEFAULT_SPEC_VERSION, type SpecVersion, mcpSchemaId, pluginSchemaId } from '../schemas.js';
import { addProvenanceHeader, checkSkill, selectSkills } from '../skills/index.js';
import { renderJson } from './render.js';
import { renderSidecar } from './sidecar-render.js';
import { readSourceTree } from './source.js';

/** How buildPlugin reads the project and which Agent Plugins version it writes. */
export interface BuildOptions {
  /**
   * The Agent Plugins version to write (`'1.0.0'` or `'1.1.0'`). Default: the configuration's
   * `spec`, else `'1.0.0'`.
   */
  spec?: SpecVersion;
  /**
   * Where skills, included files and shared resources are read from, absolute: the
   * `contentRoot` loadPluginConfig returns. Required.
   */
  contentRoot: string;
  /**
   * The package folder's current package.json, read by the caller. Only the pi runtime with
   * `pi.packageJson = "merge"` uses it: the product's keys are merged into it and the
   * project's are kept. Without it, merge writes the whole file, as "own" does.
   */
  existingPackageJson?: Uint8Array;
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
 *
 * `config.runtimes` adds the root package.json for `opencode` and `pi` (see runtimeFiles);
 * it is in the sidecar like every other file. Other runtime names are ignored. The one
 * combination no package can satisfy, opencode with `pi.packageJson = "merge"`, throws a
 * PluginConfigError, as loading that configuration does.
 *
 * @example
 * const { config, contentRoot } = await loadPluginConfig('plugin.toml');
 * const built = await buildPlugin(config, { contentRoot });
 * if (!built.rejected) await writePlugin(built.files, 'dist/acme.tools');
 * for (const finding of built.findings) console.error(finding.severity, finding.path, finding.message);
 *
 * @throws PluginConfigError `PLUGIN_CONFIG_INVALID` (key `pi.packageJson`): the opencode runtime
 * with `pi.packageJson = "merge"`. A problem in the project (a skill, a server, a file) is a
 * finding, never an error.
 */
export async function buildPlugin(config: PluginConfig, options: BuildOptions): Promise<PluginPackage> {
  const conflict = runtimesConflict(config);
  if (conflict !== undefined) throw new PluginConfigError('plugin config', 'pi.packageJson', conflict);
  const spec = options.spec ?? config.spec ?? DEFAULT_SPEC_VERSION;
  const findings: Finding[] = [];
  const files = new Map<string, PackageFile>();

  // Extension data the way extensionData normalizes it: an invalid namespace is left out
  // (reported), com.openai's keys sorted, other namespaces kept in their own order.
  const extensions = config.extensions === undefined ? undefined : extensionData(config.extensions);
  if (extensions) findings.push(...extensions.findings);
  const draft = manifestOf(config, spec, extensions?.extensions);
  // A token in a clone URL (repository = "https://x-access-token:ghp_…@github.com/…") is
  // package data like env: reported, and the field left out of what ships.
  for (const { field, finding } of scanManifestSecrets(draft, 'build')) {
    findings.push(finding);
    const [first, second] = field;
    const parent = second === undefined ? draft : (draft[first as string] as Record<string, unknown> | undefined);
    if (parent !== undefined) delete parent[(second ?? first) as string];
  }
  const manifest = checkPluginManifest(draft);
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
  // A root folder named like a reverse-domain namespace is a client's extension folder
  // (§8.2): its files go through the namespace's layout check. Any other file is shipped as is.
  const namespaces: Record<string, Record<string, PackageFile>> = {};
  for (const path of included.selected) {
    const slash = path.indexOf('/');
    const top = slash < 0 ? '' : path.slice(0, slash);
    if (top !== '' && isExtensionNamespace(top)) {
      const namespace = namespaces[top] ?? {};
      namespaces[top] = namespace;
      namespace[path.slice(slash + 1)] = await source.read(path);
    } else files.set(path, await source.read(path));
  }
  const extensionFolders = extensionFiles(namespaces);
  findings.push(...extensionFolders.findings);
  for (const [path, file] of extensionFolders.files) files.set(path, file);

  if (config.mcp && config.mcp.length > 0) {
    const servers = buildServers(config.mcp, { files: new Set(files.keys()) });
    findings.push(...servers.findings);
    if (Object.keys(servers.servers).length > 0) {
      files.set('mcp.json', {
        bytes: renderJson({ $schema: mcpSchemaId(spec), mcpServers: servers.servers }),
        mode: 0o644,
      });
    }
  }

  for (const [path, file] of runtimeFiles(config, files, options.existingPackageJson, findings)) files.set(path, file);

  const ordered = new Map([...files.entries()].sort(([a], [b]) => byteOrder(a, b)));
  const sorted = sortFindings(findings);
  // Whatever an error left out is recorded in the sidecar, so the package itself says it is
  // incomplete: validate and verify report it wherever the folder goes.
  ordered.set(SIDECAR, renderSidecar(spec, ordered, sorted));
  return { spec, files: ordered, findings: sorted, rejected: manifest.rejected };
}

/**
 * What the opencode and pi runtimes add to the package, given every other file: the root
 * package.json and, for Pi, the skills tree `pi.skills` names.
 *
 * - opencode: opencodePackageJson, owned in full.
 * - pi: piPackageJson, merged into `existing` under `pi.packageJson = "merge"`.
 * - both: one file serves both runtimes, since npm allows one package.json per package:
 *   Pi's keys plus OpenCode's `dependencies`, in the key order both use (`pi` before
 *   `dependencies`), owned in full by both. The identity and `files` keys are the same in
 *   either file, so nothing is lost.
 *
 * Pi's skills: the seed's default is `.pi/skills`, and `skills` "reuses the tree the other
 * runtimes write". Any other folder is therefore a tree of its own, so the skills are copied
 * there, byte for byte as under skills/; the package then loads in Pi with the folder
 * `pi.skills` names actually present.
 *
 * "files" lists what the package ships except the sidecar, which is the project's record
 * for verify, not something either runtime loads.
 */
function runtimeFiles(
  config: PluginConfig,
  files: ReadonlyMap<string, PackageFile>,
  existing: Uint8Array | undefined,
  findings: Finding[],
): Map<string, PackageFile> {
  const runtimes = config.runtimes ?? [];
  const opencode = runtimes.includes('opencode');
  const pi = runtimes.includes('pi');
  const added = new Map<string, PackageFile>();
  if (!opencode && !pi) return added;

  let piConfig = config.pi;
  if (pi) {
    const skillsDir = piSkillsDir(config.pi?.skillsDir, files, findings);
    // The folder handed on is already checked, so piPackageJson reports nothing about it twice.
    piConfig = { ...config.pi, skillsDir };
    if (skillsDir !== 'skills') {
      for (const [path, file] of files)
        if (path.startsWith('skills/')) added.set(`${skillsDir}/${path.slice('skills/'.length)}`, file);
    }
  }
  const input: RuntimePackageInput = {
    name: config.name,
    // The manifest is the source of the version: an unversioned plugin gets no version key
    // rather than an invented one (piPackageJson and opencodePackageJson leave out undefined).
    version: config.version as string,
    description: config.description,
    author: config.author,
    repository: config.repository,
    keywords: config.keywords,
    license: config.license,
    paths: [...files.keys(), ...added.keys()].sort(byteOrder),
    config: { packageManager: config.packageManager, opencodeDependency: config.opencodeDependency, pi: piConfig },
  };
  const built = pi
    ? piPackageJson(input, piConfig?.packageJson === 'merge' ? existing : undefined)
    : opencodePackageJson(input);
  findings.push(...built.findings);
  let bytes = built.bytes;
  if (pi && opencode) {
    const dependencies = (
      JSON.parse(Buffer.from(opencodePackageJson(input).bytes).toString('utf8')) as Record<string, unknown>
    ).dependencies;
    const both: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(
      JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>,
    )) {
      if (key === 'packageManager') both.dependencies = dependencies;
      both[key] = value;
    }
    if (!('dependencies' in both)) both.dependencies = dependencies;
    bytes = renderJson(both);
  }
  added.set(PACKAGE_JSON, { bytes, mode: 0o644 });
  return added;
}

// Files a Pi skills tree may not hold or sit below: each is generated from its own source.
const NOT_PI_SKILLS = ['plugin.json', 'mcp.json', PACKAGE_JSON, SIDECAR];

/**
 * The folder Pi's skills go to, "/"-separated with no "./" or trailing "/": the configured
 * one, else `.pi/skills`, else `skills` (always usable, it is the tree itself). A folder is
 * skipped, with a finding, when it is not a package path, lies inside skills/ (a client
 * would take it for a skill), or meets a file the package already has: a copy there would
 * replace that file or need it to be a folder.
 */
function piSkillsDir(
  configured: string | undefined,
  files: ReadonlyMap<string, PackageFile>,
  findings: Finding[],
): string {
  const taken = [...files.keys(), ...NOT_PI_SKILLS];
  const problem = (dir: string): string | undefined => {
    const pathProblem = packagePathProblem(dir);
    if (pathProblem !== undefined) return pathProblem;
    if (dir.startsWith('skills/')) return 'lies inside the skills tree';
    if (taken.some((path) => path === dir || path.startsWith(`${dir}/`) || dir.startsWith(`${path}/`)))
      return 'meets a file the package already has';
    return undefined;
  };
  const candidates =
    configured === undefined
      ? [DEFAULT_PI_SKILLS_DIR]
      : [configured.replace(/^\.\//, '').replace(/\/+$/, ''), DEFAULT_PI_SKILLS_DIR];
  for (const [index, dir] of candidates.entries()) {
    if (dir === 'skills') return dir;
    const why = problem(dir);
    if (why === undefined) return dir;
    const next = candidates[index + 1] ?? 'skills';
    const what = index === 0 && configured !== undefined ? 'skills_dir' : `the default ${DEFAULT_PI_SKILLS_DIR}`;
    findings.push(
      findingFrom(
        RUNTIME_FINDING_CODES,
        'runtime.pi-skills-dir-invalid',
        'plugin#/pi/skillsDir',
        `${what} ${why}; ${next} was written instead`,
      ),
    );
  }
  return 'skills';
}

/** plugin.json as the configuration says, fields in the schema's order, empty ones left out. */
function manifestOf(
  config: PluginConfig,
  spec: SpecVersion,
  extensions: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const author =
    config.author &&
    Object.fromEntries(Object.entries(config.author).filter(([, value]) => value !== undefined && value !== ''));
  const entries: Array<[string, unknown]> = [
    ['$schema', pluginSchemaId(spec)],
    ['name', config.name],
    ['presentation', config.presentation === undefined ? undefined : sortKeysDeep(config.presentation)],
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
  const under = source.paths
    .filter((path) => path.startsWith(prefix))
    .map((path) => `skills/${path.slice(prefix.length)}`);
  const layout = selectSkills(under);
  findings.push(...layout.findings);
  // Each skill's files, grouped once: filtering every path per skill is quadratic.
  const bySkill = new Map<string, string[]>();
  for (const path of source.paths) {
    if (!path.startsWith(prefix)) continue;
    const name = path.slice(prefix.length).split('/')[0] ?? '';
    const list = bySkill.get(name);
    if (list) list.push(path);
    else bySkill.set(name, [path]);
  }
  let skills = new Map<string, Map<string, PackageFile>>();
  for (const name of layout.skills) {
    const own = new Map<string, PackageFile>();
    for (const path of bySkill.get(name) ?? [])
      own.set(path.slice(prefix.length + name.length + 1), await source.read(path));
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
    for (const path of source.paths.filter((p) => p.startsWith(`${name}/`)))
      shared.set(path.slice(name.length + 1), await source.read(path));
    const result = shareResources(skills, name, shared, { skillsDir });
    findings.push(...result.findings);
    skills = result.skills;
  }
  if (config.provenanceHeaders !== false) {
    for (const [name, own] of skills) {
      const skillMd = own.get('SKILL.md')!;
      own.set('SKILL.md', {
        ...skillMd,
        bytes: addProvenanceHeader(skillMd.bytes, {
          generator: GENERATOR,
          sourcePath: join(skillsDir, name, 'SKILL.md'),
        }),
      });
    }
  }
  return skills;
}
