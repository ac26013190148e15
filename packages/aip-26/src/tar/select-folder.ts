import { bundlePathProblem } from './bundle-plan.js';

/**
 * A `select` for the read functions: keeps `folder` and what is below it, placed under `as`
 * (default: the root). `selectFolder('pkg/tool', 'vendor/tool')` maps "pkg/tool/a.js" to
 * "vendor/tool/a.js" and skips "pkg/other.js" and "pkg/toolbox/x". With `stripComponents: 1`
 * this narrows a GitHub tarball, whose entries all sit under one "owner-repo-sha/" folder.
 */
export function selectFolder(folder: string, as = ''): (path: string) => string | undefined {
  for (const [name, value] of [
    ['folder', folder],
    ['as', as],
  ] as const) {
    const problem = value === '' ? undefined : bundlePathProblem(value);
    if (problem !== undefined) throw new RangeError(`selectFolder ${name} ${JSON.stringify(value)}: ${problem}`);
  }
  const prefix = folder === '' ? '' : `${folder}/`;
  return (path) => {
    if (path === folder) return as;
    if (!path.startsWith(prefix)) return undefined;
    const rest = path.slice(prefix.length);
    return as === '' ? rest : `${as}/${rest}`;
  };
}
