import { byteOrder, type PackageFile } from '../bundle/include.js';
import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { isExtensionNamespace } from '../manifest.js';
import { EXTENSION_FINDING_CODES } from './codes.js';
import { RESERVED_NAMESPACE_FOLDERS, knownNamespace, matchLayout } from './namespaces.js';
import { packagePathProblem } from './paths.js';

/** Why `namespace` cannot name a namespace folder, or undefined when it can. */
export function namespaceFolderProblem(namespace: string): string | undefined {
  if (!isExtensionNamespace(namespace)) return 'is not a reverse-domain namespace';
  if (RESERVED_NAMESPACE_FOLDERS.includes(namespace)) return 'names a file at the package root';
  return undefined;
}

/**
 * The namespace folders of a package (§8.2): `namespaces` maps a namespace to its files, with
 * paths relative to the namespace folder. Returns every file at `<namespace>/<path>`, in byte
 * order of that path.
 *
 * | Input                                              | Outcome                       | Code |
 * |----------------------------------------------------|-------------------------------|------|
 * | namespace not reverse-domain, or `plugin.json` …    | the whole folder left out     | extension.namespace-invalid |
 * | path absolute, with `..`, `.`, `//`, `\`, NUL      | the file left out             | extension.path-invalid |
 * | known namespace, path outside its layout           | packaged as is, warning       | extension.layout-unknown |
 * | unknown (valid) namespace, any valid path           | packaged as is                | — |
 *
 * A file off the layout of a known namespace is carried rather than dropped: the seed's table
 * lists what the product reads and writes, not everything the client may read (a client
 * defines its own folder, §8), and dropping bytes the caller supplied would lose content. The
 * warning says the client may ignore it.
 */
export function extensionFiles(namespaces: Readonly<Record<string, Readonly<Record<string, PackageFile>>>>): {
  files: Map<string, PackageFile>;
  findings: Finding[];
} {
  const findings: Finding[] = [];
  const collected: [string, PackageFile][] = [];
  for (const [namespace, files] of Object.entries(namespaces)) {
    const problem = namespaceFolderProblem(namespace);
    if (problem !== undefined) {
      findings.push(
        findingFrom(
          EXTENSION_FINDING_CODES,
          'extension.namespace-invalid',
          `${namespace}/`,
          `the namespace folder ${problem}; its files were not packaged`,
        ),
      );
      continue;
    }
    const known = knownNamespace(namespace);
    for (const [path, file] of Object.entries(files)) {
      const pathProblem = packagePathProblem(path);
      if (pathProblem !== undefined) {
        findings.push(
          findingFrom(
            EXTENSION_FINDING_CODES,
            'extension.path-invalid',
            `${namespace}/`,
            `a file path of the namespace folder ${pathProblem}; the file was not packaged`,
          ),
        );
        continue;
      }
      if (known !== undefined && matchLayout(known, path) === undefined) {
        findings.push(
          findingFrom(
            EXTENSION_FINDING_CODES,
            'extension.layout-unknown',
            `${namespace}/${path}`,
            `the file is not part of the ${namespace} layout; it was packaged as is`,
          ),
        );
      }
      collected.push([`${namespace}/${path}`, file]);
    }
  }
  collected.sort(([a], [b]) => byteOrder(a, b));
  return { files: new Map(collected), findings: sortFindings(findings) };
}
