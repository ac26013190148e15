import { byteOrder, type PackageFile } from '../bundle/include.js';
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { EXTENSION_FINDING_CODES } from './codes.js';
import { namespaceFolderProblem } from './files.js';
import { type ExtensionKind, knownNamespace, matchLayout } from './namespaces.js';
import { packagePathProblem } from './paths.js';
import { isPlainObject, pointerToken } from '../values.js';

/** A file import turns into project content: an agent, a command, a rule or a context document. */
interface ImportedExtension {
  namespace: string;
  kind: Exclude<ExtensionKind, 'hooks'>;
  /** The `<name>` of the layout (`review` for `agents/review.agent.md`). */
  name: string;
  /** The package path, `<namespace>/<path>`. */
  path: string;
  file: PackageFile;
}

/** Why a piece of extension content has no equivalent in the project. */
export type UnmappedReason =
  /** A namespace the product does not know: its folder or its manifest data. */
  | 'unknown-namespace'
  /** Known content the product has no place for (hooks/hooks.json, data of a folder-only namespace). */
  | 'no-equivalent'
  /** A file in a known namespace folder outside that namespace's layout. */
  | 'not-in-layout'
  /** A second file of the same kind and name (a Claude Code and a Copilot agent `review`); the first in byte order of path is imported. */
  | 'duplicate';

interface UnmappedExtension {
  /** `<namespace>/` for a whole folder, `<namespace>/<path>` for one file, `plugin.json#/extensions/…` for data. */
  path: string;
  reason: UnmappedReason;
}

export interface ExtensionSplit {
  /** The files of each namespace folder (paths relative to it), namespaces and paths in byte order. */
  namespaces: Map<string, Map<string, PackageFile>>;
  /** What becomes agents, commands, rules and context, in byte order of path. */
  imported: ImportedExtension[];
  /** extensions["com.openai"].interface, for [plugin.interface]; undefined when absent or not an object. */
  interface: Record<string, unknown> | undefined;
  /** What has no equivalent, in byte order of path. */
  report: UnmappedExtension[];
  /** Every package file outside a namespace folder (plugin.json, skills/, bundled files), unchanged. */
  rest: Map<string, PackageFile>;
  findings: Finding[];
}

/**
 * Import (the seed's "Import" section): which package files belong to which namespace folder,
 * what of them becomes project content, and what has no equivalent. A top-level folder is a
 * namespace folder when its name is a valid namespace (§8.2); `files` holds every package
 * path relative to the plugin root. `data` is plugin.json's `extensions` when it has one.
 *
 * - Claude Code agents and commands, Copilot agents, ai-rulez rules and context are imported.
 * - Unknown namespaces are reported once per folder and once per manifest entry.
 * - hooks/hooks.json, files outside a known layout and duplicates are reported per file.
 * - A namespace folder path that could escape the root is refused (extension.path-invalid).
 */
export function splitExtensions(
  files: ReadonlyMap<string, PackageFile>,
  data?: Readonly<Record<string, unknown>>,
): ExtensionSplit {
  const findings: Finding[] = [];
  const report: UnmappedExtension[] = [];
  const imported: ImportedExtension[] = [];
  const rest = new Map<string, PackageFile>();
  const namespaces = new Map<string, Map<string, PackageFile>>();
  const taken = new Set<string>();

  for (const fullPath of [...files.keys()].sort(byteOrder)) {
    const file = files.get(fullPath) as PackageFile;
    const slash = fullPath.indexOf('/');
    const namespace = slash < 0 ? undefined : fullPath.slice(0, slash);
    if (namespace === undefined || namespaceFolderProblem(namespace) !== undefined) {
      rest.set(fullPath, file);
      continue;
    }
    const path = fullPath.slice(slash + 1);
    const problem = packagePathProblem(path);
    if (problem !== undefined) {
      findings.push(
        findingFrom(
          EXTENSION_FINDING_CODES,
          'extension.path-invalid',
          `${namespace}/`,
          `a file path of the namespace folder ${problem}; the file was not imported`,
        ),
      );
      continue;
    }
    let folder = namespaces.get(namespace);
    if (folder === undefined) {
      folder = new Map();
      namespaces.set(namespace, folder);
      if (knownNamespace(namespace) === undefined) report.push({ path: `${namespace}/`, reason: 'unknown-namespace' });
    }
    folder.set(path, file);

    const known = knownNamespace(namespace);
    if (known === undefined) continue;
    const match = matchLayout(known, path);
    if (match === undefined) {
      report.push({ path: fullPath, reason: 'not-in-layout' });
    } else if (!match.layout.imported || match.name === undefined || match.layout.kind === 'hooks') {
      report.push({ path: fullPath, reason: 'no-equivalent' });
    } else {
      const key = `${match.layout.kind}/${match.name}`;
      if (taken.has(key)) {
        report.push({ path: fullPath, reason: 'duplicate' });
      } else {
        taken.add(key);
        imported.push({ namespace, kind: match.layout.kind, name: match.name, path: fullPath, file });
      }
    }
  }

  let codexInterface: Record<string, unknown> | undefined;
  for (const [namespace, value] of Object.entries(data ?? {})) {
    const at = `plugin.json#/extensions/${pointerToken(namespace)}`;
    const known = knownNamespace(namespace);
    if (known === undefined) {
      report.push({ path: at, reason: 'unknown-namespace' });
      continue;
    }
    if (!isPlainObject(value)) {
      report.push({ path: at, reason: 'no-equivalent' });
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (key === 'interface' && known.data.includes(key) && isPlainObject(item)) codexInterface = item;
      else report.push({ path: `${at}/${pointerToken(key)}`, reason: 'no-equivalent' });
    }
  }

  report.sort((a, b) => byteOrder(a.path, b.path));
  return { namespaces, imported, interface: codexInterface, report, rest, findings: sortFindings(findings) };
}
