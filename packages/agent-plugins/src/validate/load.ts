import { DocumentError, DocumentSyntaxError, parseUntrustedJson } from '@agentproto/documents';
import { type PackageFile, byteOrder } from '../bundle/include.js';
import { extensionFiles, namespaceFolderProblem } from '../extensions/index.js';
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { checkMcpManifestVersion, checkPluginManifest } from '../manifest.js';
import type { McpServer } from '../mcp/check.js';
import { commandForm, unbundledCommand } from '../mcp/command.js';
import { MCP_FINDING_CODES } from '../mcp/codes.js';
import { readServers } from '../mcp/read.js';
import type { ListedPath, PluginReader, ReadFailure, ReadFileResult } from '../read/reader.js';
import type { SpecVersion } from '../schemas.js';
import { SKILL_FILE, checkSkill, selectSkills } from '../skills/index.js';
import { VALIDATE_FINDING_CODES } from './codes.js';
import { SIDECAR } from '../bundle/include.js';
import { omittedFindings } from '../build/sidecar.js';
import { scanManifestSecrets } from '../secrets/scan.js';
import { isRecord, pointerToken } from '../values.js';

/** A package as a conformant client loads it, with the bytes of every file it could read. */
export interface LoadedPackage {
  spec: SpecVersion | undefined;
  /** True when a client loads nothing of the plugin (§5.2, §4.1 item 1, the package byte limit). */
  rejected: boolean;
  /** plugin.json as a client keeps it (see checkPluginManifest); undefined when rejected. */
  manifest: Record<string, unknown> | undefined;
  /** checkPluginManifest's findings alone: what of plugin.json a client ignores. */
  manifestFindings: Finding[];
  /** The loaded skills by name, each with its readable files by path inside the skill folder. */
  skills: Map<string, Map<string, PackageFile>>;
  /** Skill folders a client discovers (or tries to) and skips, in byte order. */
  skippedSkills: string[];
  /** True when `skills` is present but the skills component type is invalid (§6.2, §4.1 item 2). */
  skillsDisabled: boolean;
  /** Paths under skills/ that belong to no discovered skill folder (a client never reads them). */
  looseSkillPaths: string[];
  /** True when mcp.json is present (as anything). */
  mcpPresent: boolean;
  /** True when a client disables MCP for the plugin (§7.2.2 item 2). */
  mcpDisabled: boolean;
  /** The servers a client loads, names in code-point order. */
  servers: Record<string, McpServer>;
  /** Entries of mcpServers a client skips, in byte order. */
  skippedServers: string[];
  /** Every other readable file (bundled root files, namespace folders, the sidecar) by package path, in byte order. */
  other: Map<string, PackageFile>;
  /** Package paths a client is denied (§4.1 item 5), in byte order. */
  denied: string[];
  /** Every finding, sorted with sortFindings. */
  findings: Finding[];
}

const PLUGIN_FILE = 'plugin.json';
const MCP_FILE = 'mcp.json';
const SKILLS_DIR = 'skills';
const ROOT_PREFIX = '${PLUGIN_ROOT}';

/**
 * Loads the package `reader` reads (a folder, read/node.ts; a tree, read/tree.ts), through
 * the reader alone, in the order a client does:
 * plugin.json (§5.1), then mcp.json (§7.2), then the skills (§7.1), then every other file.
 *
 * Every file of the package is read, not only the ones a client uses. A client reads what it
 * uses, but which bundled file a client reads is not knowable here: a skill's script, a stdio
 * command, a namespace folder of a client this package does not know. Reading each one once
 * proves that every path resolves inside the root, is a regular file, is readable and fits the
 * size limits, and gives import the bytes. Files of skills a client skips, and files under
 * skills/ outside any skill folder, are listed but not read: no client ever reads them.
 *
 * Failures follow the reader's failure scopes (FAILURE_BOUNDARIES): `plugin` rejects the
 * plugin, `skills` disables every skill, `skill` skips one, `mcp` disables MCP, `mcp-server`
 * skips one server, and `file` denies that path only (a warning).
 */
export async function loadPackageWith(reader: PluginReader, earlier: readonly Finding[] = []): Promise<LoadedPackage> {
  const load = startLoad(reader);
  // What was found before the package could be read (an upload's skipped entries).
  load.own.push(...earlier);
  // plugin.json: everything else depends on it (§5.1: loaded and validated before discovery).
  const spec = await loadManifest(load);
  if (spec === undefined) return finishLoad(load);
  if (!(await loadMcp(load, spec))) return finishLoad(load);
  // Every path of the package, links followed inside the root; nothing is read yet.
  const walked = await walk(load.reader, load.own, load.listed);
  for (const failure of walked.failures) if (!applyFailure(load, failure)) return finishLoad(load);
  if (!(await loadSkills(load, walked.files))) return finishLoad(load);
  if (!(await loadOtherFiles(load, walked.files))) return finishLoad(load);
  checkSidecar(load);
  checkNamespaceFolders(load);
  return finishLoad(load);
}

/**
 * One load in progress: the reader, the package as loaded so far, and loadPackage's own
 * findings (the reader keeps its own). Each step below adds to it, in the order a client loads.
 */
interface PackageLoad {
  readonly reader: PluginReader;
  /** The real path of every regular file the walk listed, by package path: read where it was listed. */
  readonly listed: Map<string, string>;
  readonly result: LoadedPackage;
  readonly own: Finding[];
}

/**
 * A package refused before it was read (an upload that is not one, a tree whose entries
 * cannot be placed): rejected, with `findings` alone.
 */
export function refusedPackage(reader: PluginReader, findings: readonly Finding[]): LoadedPackage {
  const load = startLoad(reader);
  load.result.rejected = true;
  load.own.push(...findings);
  return finishLoad(load);
}

function startLoad(reader: PluginReader): PackageLoad {
  // The executable bit is the reader's mode: the stat of the very handle the bytes were read
  // through, so no second look at the disk can see another file.
  const result: LoadedPackage = {
    spec: undefined,
    rejected: false,
    manifest: undefined,
    manifestFindings: [],
    skills: new Map(),
    skippedSkills: [],
    skillsDisabled: false,
    looseSkillPaths: [],
    mcpPresent: false,
    mcpDisabled: false,
    servers: {},
    skippedServers: [],
    other: new Map(),
    denied: [],
    findings: [],
  };
  return { reader, listed: new Map(), result, own: [] };
}

/** A file as the package holds it: its bytes, and 0o755 when the handle read was executable, else 0o644. */
function packageFile(read: { bytes: Uint8Array; mode: number }): PackageFile {
  return { bytes: read.bytes, mode: (read.mode & 0o111) !== 0 ? 0o755 : 0o644 };
}

/** The loaded package: a rejected one holds nothing, lists are deduplicated and sorted, findings sorted. */
function finishLoad(load: PackageLoad): LoadedPackage {
  const { result, own, reader } = load;
  if (result.rejected) {
    Object.assign(result, {
      manifest: undefined,
      skills: new Map(),
      skippedSkills: [],
      servers: {},
      skippedServers: [],
      other: new Map(),
      looseSkillPaths: [],
    });
  }
  result.skippedSkills = [...new Set(result.skippedSkills)].sort(byteOrder);
  result.skippedServers = [...new Set(result.skippedServers)].sort(byteOrder);
  result.denied = [...new Set(result.denied)].sort(byteOrder);
  if (!result.rejected) own.push(...unreportedSkips(result, [...reader.findings, ...own]));
  result.findings = sortFindings([...reader.findings, ...own]);
  return result;
}

/** Applies a failure's scope; returns false when the plugin is now rejected. */
function applyFailure(load: PackageLoad, failure: ReadFailure): boolean {
  const { result } = load;
  switch (failure.scope) {
    case 'plugin':
      result.rejected = true;
      return false;
    case 'skills':
      result.skillsDisabled = true;
      break;
    case 'skill':
      result.skippedSkills.push(failure.path.split('/')[1] ?? '');
      break;
    case 'mcp':
      result.mcpDisabled = true;
      break;
    default:
      result.denied.push(failure.path);
  }
  return true;
}

/**
 * plugin.json (§5.1): read, parsed and checked as a client does. The version it targets, or
 * undefined when the plugin is rejected (missing, unreadable, not JSON, or refused by the checks).
 */
async function loadManifest(load: PackageLoad): Promise<SpecVersion | undefined> {
  const { reader, result, own } = load;
  const pluginRead = await reader.readFile(PLUGIN_FILE);
  if (!pluginRead.ok) {
    if (pluginRead.absent)
      own.push(
        findingFrom(VALIDATE_FINDING_CODES, 'plugin.missing', `${PLUGIN_FILE}#`, 'is missing; the plugin is rejected'),
      );
    result.rejected = true;
    return undefined;
  }
  const pluginJson = parseJson(pluginRead.bytes, PLUGIN_FILE);
  if (!pluginJson.ok) {
    own.push(
      findingFrom(
        VALIDATE_FINDING_CODES,
        pluginJson.overLimit ? 'plugin.over-limit' : 'plugin.not-json',
        `${PLUGIN_FILE}#`,
        `${pluginJson.problem}; the plugin is rejected`,
      ),
    );
    result.rejected = true;
    return undefined;
  }
  const manifest = checkPluginManifest(pluginJson.value);
  own.push(...manifest.findings);
  // §5.4 checks homepage, repository and author.url only as strings; a token in one is a warning.
  own.push(...scanManifestSecrets(pluginJson.value, 'read').map((secret) => secret.finding));
  result.spec = manifest.spec;
  result.manifestFindings = manifest.findings;
  if (manifest.rejected || manifest.spec === undefined || manifest.manifest === undefined) {
    result.rejected = true;
    return undefined;
  }
  result.manifest = manifest.manifest;
  return manifest.spec;
}

/**
 * mcp.json (§7.2): any top-level failure disables MCP alone; a bad entry skips that server.
 * False when the plugin is now rejected.
 */
async function loadMcp(load: PackageLoad, spec: SpecVersion): Promise<boolean> {
  const { reader, result, own } = load;
  const mcpRead = await reader.readFile(MCP_FILE);
  if (!mcpRead.ok) {
    if (!mcpRead.absent) {
      result.mcpPresent = true;
      if (!applyFailure(load, mcpRead)) return false;
    }
    return true;
  }
  result.mcpPresent = true;
  const mcpJson = parseJson(mcpRead.bytes, MCP_FILE);
  if (!mcpJson.ok) {
    own.push(
      findingFrom(
        VALIDATE_FINDING_CODES,
        mcpJson.overLimit ? 'mcp.over-limit' : 'mcp.not-json',
        `${MCP_FILE}#`,
        `${mcpJson.problem}; MCP is disabled`,
      ),
    );
    result.mcpDisabled = true;
    return true;
  }
  const version = checkMcpManifestVersion(spec, mcpJson.value);
  own.push(...version.findings);
  if (version.mcpDisabled) {
    result.mcpDisabled = true;
    return true;
  }
  const read = readServers(mcpJson.value);
  own.push(...read.findings);
  result.mcpDisabled = read.mcpDisabled;
  const declared =
    isRecord(mcpJson.value) && isRecord(mcpJson.value.mcpServers) ? Object.keys(mcpJson.value.mcpServers) : [];
  const loaded: Record<string, McpServer> = {};
  for (const [name, server] of Object.entries(read.servers)) {
    const contained = await serverPathsContained(reader, name, server, own);
    if (contained === 'rejected') {
      result.rejected = true;
      return false;
    }
    if (contained)
      Object.defineProperty(loaded, name, {
        value: server,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  result.servers = loaded;
  if (!read.mcpDisabled) result.skippedServers = declared.filter((name) => !Object.hasOwn(loaded, name));
  return true;
}

/**
 * skills/ (§6.2, §7.1): each immediate child folder with a regular SKILL.md is one skill. Every
 * file of a loaded skill is read; `files` is every path of the package (walk). False when the
 * plugin is now rejected.
 */
async function loadSkills(load: PackageLoad, files: readonly string[]): Promise<boolean> {
  const { reader, result, own } = load;
  const skillsListed = await reader.list(SKILLS_DIR);
  if (!skillsListed.ok && !skillsListed.absent && !applyFailure(load, skillsListed)) return false;
  const skillsPresent = skillsListed.ok || !skillsListed.absent;
  const underSkills = files.filter((path) => path.startsWith(`${SKILLS_DIR}/`));
  if (skillsPresent && !result.skillsDisabled) {
    const layout = selectSkills(underSkills);
    own.push(...layout.findings);
    // Each skill's files, grouped once: filtering the whole list per skill is quadratic.
    const bySkill = new Map<string, string[]>();
    for (const path of underSkills) {
      const name = path.split('/')[1] ?? '';
      const list = bySkill.get(name);
      if (list) list.push(path);
      else bySkill.set(name, [path]);
    }
    // One queue of reads for every skill, each SKILL.md before the skill's other files: the
    // reads run ahead across skills, and those of a skill that is skipped are never taken.
    const queue: string[] = [];
    const queued = new Map<string, { at: number; rest: string[] }>();
    for (const name of layout.skills) {
      const skillMdPath = `${SKILLS_DIR}/${name}/${SKILL_FILE}`;
      const rest = (bySkill.get(name) ?? []).filter((path) => path !== skillMdPath);
      queued.set(name, { at: queue.length, rest });
      queue.push(skillMdPath, ...rest);
    }
    const take = reader.readAhead(queue.map((path) => listedPath(load, path)));
    for (const name of layout.skills) {
      if (result.skillsDisabled) break;
      if (result.skippedSkills.includes(name)) continue;
      const { at, rest } = queued.get(name) as { at: number; rest: string[] };
      const skillMd = await take(at);
      if (!skillMd.ok) {
        if (skillMd.absent) result.skippedSkills.push(name);
        else if (!applyFailure(load, skillMd)) return false;
        else if (skillMd.scope === 'file') result.skippedSkills.push(name);
        continue;
      }
      const check = checkSkill(name, skillMd.bytes);
      own.push(...check.findings);
      if (!check.accepted) {
        result.skippedSkills.push(name);
        continue;
      }
      const skillFiles = await readSkillFiles(load, name, skillMd, rest, (index) => take(at + 1 + index));
      if (skillFiles === undefined) return false;
      if (result.skillsDisabled || result.skippedSkills.includes(name)) continue;
      result.skills.set(name, skillFiles);
    }
    if (result.skillsDisabled) {
      result.skippedSkills.push(...layout.skills, ...result.skills.keys());
      result.skills = new Map();
    }
    const discovered = new Set([...layout.skills, ...result.skippedSkills]);
    result.looseSkillPaths = underSkills.filter((path) => !discovered.has(path.split('/')[1] ?? ''));
  } else if (result.skillsDisabled) {
    result.looseSkillPaths = underSkills;
  }
  return true;
}

/**
 * The readable files of the accepted skill `name`, by path inside its folder: SKILL.md (read
 * already) and every path of `rest` (the skill's other package paths), the read of each taken
 * by its index. Undefined when the plugin is now rejected.
 */
async function readSkillFiles(
  load: PackageLoad,
  name: string,
  skillMd: { bytes: Uint8Array; mode: number },
  rest: readonly string[],
  take: (index: number) => Promise<ReadFileResult>,
): Promise<Map<string, PackageFile> | undefined> {
  const files = new Map<string, PackageFile>([[SKILL_FILE, packageFile(skillMd)]]);
  const prefix = `${SKILLS_DIR}/${name}/`;
  for (const [restIndex, path] of rest.entries()) {
    const read = await take(restIndex);
    if (read.ok) files.set(path.slice(prefix.length), packageFile(read));
    else if (!read.absent && !applyFailure(load, read)) return undefined;
  }
  return files;
}

/**
 * Everything else: bundled root files, namespace folders, the sidecar, each read once into
 * `other`. False when the plugin is now rejected.
 */
async function loadOtherFiles(load: PackageLoad, files: readonly string[]): Promise<boolean> {
  const others = files.filter(
    (path) => !(path === PLUGIN_FILE || path === MCP_FILE || path === SKILLS_DIR || path.startsWith(`${SKILLS_DIR}/`)),
  );
  const othersAhead = load.reader.readAhead(others.map((path) => listedPath(load, path)));
  for (const [index, path] of others.entries()) {
    const read = await othersAhead(index);
    if (read.ok) load.result.other.set(path, packageFile(read));
    else if (!read.absent && !applyFailure(load, read)) return false;
  }
  return true;
}

/**
 * The build's record of what it left out: the package lacks those components even though
 * every file it holds is fine, so each is an error here too (validate --strict fails on it).
 */
function checkSidecar(load: PackageLoad): void {
  const sidecar = load.result.other.get(SIDECAR);
  if (sidecar !== undefined) load.own.push(...omittedFindings(sidecar.bytes));
}

/**
 * Namespace folders (§8.2): the layout of a known namespace is checked; unknown ones are the
 * client's own business and only have to be readable, which loadOtherFiles made sure of.
 */
function checkNamespaceFolders(load: PackageLoad): void {
  const namespaces = new Map<string, [string, PackageFile][]>();
  for (const [path, file] of load.result.other) {
    const slash = path.indexOf('/');
    if (slash < 0) continue;
    const namespace = path.slice(0, slash);
    if (namespaceFolderProblem(namespace) !== undefined) continue;
    namespaces.set(namespace, [...(namespaces.get(namespace) ?? []), [path.slice(slash + 1), file]]);
  }
  load.own.push(
    ...extensionFiles(
      Object.fromEntries([...namespaces].map(([namespace, files]) => [namespace, Object.fromEntries(files)])),
    ).findings,
  );
}

/**
 * Checks that a server's plugin-relative command and cwd resolve inside the root (§4.1 item
 * 4). False when the entry is invalid and skipped, 'rejected' when the package byte limit was
 * hit. A path that is contained but names nothing is a warning: the entry is valid, the
 * server will fail to start (§7.2.2 item 5).
 */
async function serverPathsContained(
  reader: PluginReader,
  name: string,
  server: McpServer,
  findings: Finding[],
): Promise<boolean | 'rejected'> {
  if (server.type !== 'stdio') return true;
  const at = (field: string) => `mcp.json#/mcpServers/${pointerToken(name)}/${field}`;
  // The reader's own finding names the path that failed (a link file, say); this one names
  // the entry it costs, so a skipped server is never reported only through a file it uses.
  const refused = (field: string, failure: ReadFailure): false => {
    findings.push(
      findingFrom(
        VALIDATE_FINDING_CODES,
        'mcp.server-path-refused',
        at(field),
        // The code, not the path: a message never quotes a value of the package (the command
        // is one), and the reader's finding on the path itself says where it failed.
        `does not resolve to an entry inside the plugin root (${failure.finding.code}, reported on the path itself); the server is skipped`,
      ),
    );
    return false;
  };
  const form = commandForm(server.command);
  if (form.kind === 'path') {
    const resolved = await reader.resolve(form.path, { use: 'mcp-server' });
    if (!resolved.ok && !resolved.absent)
      return resolved.scope === 'plugin' ? 'rejected' : refused('command', resolved);
    if (!resolved.ok || resolved.kind !== 'file') {
      // One token is decided by the package's files (commandForm): a path holding spaces is
      // one when the file is there, and a command line written as one string when it is not.
      const problem = unbundledCommand(server.command, resolved.ok ? 'not-a-file' : 'absent');
      if ('invalid' in problem) {
        findings.push(
          findingFrom(
            MCP_FINDING_CODES,
            'mcp.command-invalid',
            at('command'),
            `${problem.invalid}; the server is skipped`,
          ),
        );
        return false;
      }
      findings.push(
        findingFrom(
          MCP_FINDING_CODES,
          'mcp.command-not-bundled',
          at('command'),
          `${problem.missing}; the server will fail to start`,
        ),
      );
    }
  }
  const cwd = server.cwd;
  if (cwd !== undefined && !cwd.slice(ROOT_PREFIX.length).includes('${')) {
    let rel: string | undefined;
    if (cwd.startsWith('./')) rel = cwd;
    else if (cwd === ROOT_PREFIX) rel = '';
    else if (cwd.startsWith(`${ROOT_PREFIX}/`)) rel = cwd.slice(ROOT_PREFIX.length + 1);
    // A ${PLUGIN_DATA} cwd lives in the client's data folder, which no package holds.
    if (rel !== undefined) {
      const resolved = await reader.resolve(rel, { use: 'mcp-server' });
      if (!resolved.ok && !resolved.absent) return resolved.scope === 'plugin' ? 'rejected' : refused('cwd', resolved);
      if (!resolved.ok || resolved.kind !== 'directory') {
        const what = resolved.ok ? 'names something other than a folder' : 'names a folder that is not in the package';
        findings.push(
          findingFrom(
            VALIDATE_FINDING_CODES,
            'mcp.cwd-not-directory',
            at('cwd'),
            `${what}; the server will fail to start`,
          ),
        );
      }
    }
  }
  return true;
}

/**
 * A finding for each skipped skill and server that no error finding names at its own path
 * (`skills/<name>/…`, `mcp.json#/mcpServers/<name>…`). The specific findings come first (a
 * rule an entry breaks, a path it uses that leaves the root); this makes sure that, whatever
 * the cause, no entry is dropped with a finding only on another path (§7.1, §7.2.2 item 3:
 * the client SHOULD report the invalid skill or entry), as importPlugin's report lists each.
 */
function unreportedSkips(result: LoadedPackage, findings: readonly Finding[]): Finding[] {
  const errorPaths = findings.filter((f) => f.severity === 'error').map((f) => f.path);
  const named = (own: string): boolean =>
    errorPaths.some((p) => p === own || p.startsWith(`${own}/`) || p.startsWith(`${own}#`));
  const added: Finding[] = [];
  for (const name of result.skippedSkills) {
    if (named(`${SKILLS_DIR}/${name}`)) continue;
    const why = result.skillsDisabled
      ? 'the skills component type is invalid (see the finding on skills), so this skill is not loaded'
      : 'its SKILL.md could not be read as a regular file of the package, so this skill is not loaded';
    added.push(findingFrom(VALIDATE_FINDING_CODES, 'skill.skipped', `${SKILLS_DIR}/${name}/`, why));
  }
  for (const name of result.skippedServers) {
    const own = `${MCP_FILE}#/mcpServers/${pointerToken(name)}`;
    if (!named(own))
      added.push(
        findingFrom(VALIDATE_FINDING_CODES, 'mcp.server-skipped', own, 'is not loaded by a conformant client'),
      );
  }
  return added;
}

/** A walked path, with where its listing found it when that was a regular file (read there). */
function listedPath(load: PackageLoad, path: string): string | ListedPath {
  const realPath = load.listed.get(path);
  return realPath === undefined ? path : { path, realPath };
}

/**
 * Every path below the root that is not a folder, in byte order of each folder's listing,
 * with links resolved (inside the root) and the failures met on the way. A folder reached
 * again through a link to one of its ancestors is not entered twice. Folders and regular
 * files are listed and read where their folder's listing found them (`listed` gets each
 * file's real path); a link is resolved from the root.
 */
async function walk(
  reader: PluginReader,
  findings: Finding[],
  listedFiles: Map<string, string>,
): Promise<{ files: string[]; failures: ReadFailure[] }> {
  const failures: ReadFailure[] = [];
  // Sibling folders are listed at once; each returns its own files, joined in listing order,
  // so the result is the same as a walk one folder at a time.
  const visit = async (at: string | ListedPath, ancestors: readonly string[]): Promise<string[]> => {
    const dir = typeof at === 'string' ? at : at.path;
    const listed = await reader.list(at);
    if (!listed.ok) {
      if (!listed.absent) failures.push(listed);
      return [];
    }
    if (ancestors.includes(listed.realPath)) {
      findings.push(
        findingFrom(
          VALIDATE_FINDING_CODES,
          'package.link-cycle',
          dir,
          'leads to a folder that contains it; its contents are listed once, under the folder itself',
        ),
      );
      return [];
    }
    const inner = [...ancestors, listed.realPath];
    const inside = (name: string) =>
      listed.realPath.endsWith('/') ? `${listed.realPath}${name}` : `${listed.realPath}/${name}`;
    const parts = await Promise.all(
      listed.entries.map(async (entry): Promise<string[]> => {
        // plugin.json and mcp.json are read on their own, with their own failure scopes.
        if (dir === '' && (entry.name === PLUGIN_FILE || entry.name === MCP_FILE)) return [];
        const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.kind === 'directory') return visit({ path, realPath: inside(entry.name) }, inner);
        if (entry.kind === 'file') {
          listedFiles.set(path, inside(entry.name));
          return [path];
        }
        if (entry.kind === 'link') {
          const resolved = await reader.resolve(path);
          if (!resolved.ok) {
            if (!resolved.absent) failures.push(resolved);
            return [];
          }
          if (resolved.kind === 'directory') return visit(path, inner);
        }
        // Anything else (a pipe, a socket) is left to readFile, which reports it as not a regular file.
        return [path];
      }),
    );
    return parts.flat();
  };
  const files = await visit('', []);
  // Listed concurrently, met in any order: reported in path order, the same on every run.
  return { files, failures: failures.sort((a, b) => byteOrder(a.path, b.path)) };
}

/**
 * JSON from a file's bytes: strict UTF-8, and a byte order mark is not skipped. RFC 8259
 * forbids writing one and JSON.parse refuses it, so a client may well refuse the file;
 * validation must not pass what a client can reject.
 */
function parseJson(
  bytes: Uint8Array,
  file: string,
): { ok: true; value: unknown } | { ok: false; problem: string; overLimit: boolean } {
  // The shared rules for untrusted documents: over 128 KiB, nested past 64 or holding past
  // 100,000 values, the file is refused before JSON.parse or any schema check walks it.
  try {
    return { ok: true, value: parseUntrustedJson(bytes, { source: file }) };
  } catch (error) {
    if (error instanceof DocumentSyntaxError)
      return {
        ok: false,
        problem: error.reason === 'NOT_UTF8' ? 'is not UTF-8 text' : 'is not valid JSON',
        overLimit: false,
      };
    if (error instanceof DocumentError) return { ok: false, problem: error.detail, overLimit: true };
    throw error;
  }
}
