// Validation of a package held in memory: no `node:` import, so it runs in a browser, a worker
// or an edge function with the same verdicts as validatePlugin on a folder.
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import type { PackageReadLimits } from '../read/reader.js';
import { type PackageTree, type TreeProblem, openTreeReader } from '../read/tree.js';
import { UPLOAD_FINDING_CODES } from '../upload/codes.js';
import type { SpecVersion } from '../schemas.js';
import { type LoadedPackage, loadPackageWith, refusedPackage } from './load.js';

/** What validatePlugin found: whether a client loads the plugin, and which skills and servers it would use. */
export interface PluginValidation {
  /** The version plugin.json targets; undefined when it names none this package supports. */
  spec: SpecVersion | undefined;
  /** True when a conformant client loads nothing of the plugin. */
  rejected: boolean;
  /** Sorted with sortFindings. */
  findings: Finding[];
  /** The skills a client loads, in byte order. Empty when rejected. */
  skills: string[];
  /** The MCP servers a client loads, in code-point order. Empty when rejected or MCP is disabled. */
  servers: string[];
  /** True when mcp.json is present and a client disables MCP for the plugin (§7.2.2); false when rejected. */
  mcpDisabled: boolean;
  /** Discovered skills a client skips, in byte order; each has an error finding at `skills/<name>/…`. Empty when rejected. */
  skippedSkills: string[];
  /** Entries of mcpServers a client skips, in byte order; each has an error finding at `mcp.json#/mcpServers/<name>…`. Empty when rejected or MCP is disabled. */
  skippedServers: string[];
}

/**
 * An upload read into a package tree (readUploadedFiles, readZip, readTarGz): the tree, and
 * what reading it found. When `refused`, the tree is empty and `findings` say why (upload.*):
 * validation rejects the plugin with them and reads nothing.
 */
export interface PackageUpload {
  tree: PackageTree;
  /** Sorted with sortFindings. */
  findings: Finding[];
  refused: boolean;
}

/** What validatePlugin reads in any runtime: a package tree, or an upload read into one. */
export type PackageSource = PackageTree | PackageUpload;

const TREE_MESSAGES: Readonly<Record<TreeProblem['kind'], string>> = {
  'path-invalid': 'is not a package path: it is empty or absolute, or holds "..", a backslash, NUL or a drive letter',
  duplicate: 'names a package path another entry names too',
  'file-dir-conflict': 'lies below a file or link of the package, or is a file where another entry makes a folder',
  'entry-unsupported': 'is not a file (bytes, mode, size), folder, link (target) or special entry of a package tree',
};

/** The findings of a tree's problems: each refuses the tree (upload.*). */
function treeProblemFindings(problems: readonly TreeProblem[]): Finding[] {
  return problems.map((problem) =>
    findingFrom(UPLOAD_FINDING_CODES, `upload.${problem.kind}`, problem.path, TREE_MESSAGES[problem.kind]),
  );
}

function isUpload(source: PackageSource): source is PackageUpload {
  return typeof (source as { get?: unknown }).get !== 'function' && 'tree' in source;
}

/**
 * Loads a package tree, or an upload, as a conformant client loads a folder (loadPackageWith
 * over openTreeReader). A refused upload, or a tree with an entry that cannot be placed
 * (upload.path-invalid, upload.duplicate, upload.file-dir-conflict, upload.entry-unsupported
 * for a value of no entry shape), is rejected unread.
 */
export async function loadPackageSource(source: PackageSource, limits: PackageReadLimits = {}): Promise<LoadedPackage> {
  const upload = isUpload(source) ? source : undefined;
  const tree = upload?.tree ?? (source as PackageTree);
  const { reader, problems } = openTreeReader(tree, limits);
  const earlier = [...(upload?.findings ?? []), ...treeProblemFindings(problems)];
  if (upload?.refused === true || problems.length > 0) return refusedPackage(reader, sortFindings(earlier));
  return loadPackageWith(reader, earlier);
}

/** The verdict of a loaded package. */
export function verdictOf(loaded: LoadedPackage): PluginValidation {
  return {
    spec: loaded.spec,
    rejected: loaded.rejected,
    findings: loaded.findings,
    skills: [...loaded.skills.keys()],
    servers: Object.keys(loaded.servers),
    mcpDisabled: !loaded.rejected && loaded.mcpDisabled,
    skippedSkills: loaded.skippedSkills,
    skippedServers: loaded.skippedServers,
  };
}

/**
 * Validates a package held in memory as a conformant client loads it: a tree (path → bytes,
 * mode, link target) or an upload read into one (readUploadedFiles, readZip, readTarGz). The
 * same reader, rules and findings as validatePlugin on the folder it was made from; no
 * Node API is used, so it runs in a browser, a worker or an edge function.
 *
 * @example
 * const verdict = await validatePlugin(readZip(new Uint8Array(await file.arrayBuffer())));
 * if (verdict.rejected) console.log(verdict.findings.map((f) => `${f.path}: ${f.message}`));
 *
 * @throws Nothing for a bad package or upload: each problem is a finding.
 */
export async function validatePackage(
  source: PackageSource,
  options: PackageReadLimits = {},
): Promise<PluginValidation> {
  return verdictOf(await loadPackageSource(source, options));
}
