// Whether a workspace package's dist/ is what `pnpm build` would write from its src/ now: every
// file its manifest loads from dist/ exists and is newer than every file under src/, its
// package.json and its tsup.config.ts. Read by `pnpm agentproto` (run dist/ or src/), `pnpm
// demo` and `pnpm bench` (build first or not); a few hundred stat calls, a few milliseconds.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * @typedef {{ name: string, exports?: unknown, main?: string, module?: string, types?: string,
 *   bin?: string | Record<string, string>, dependencies?: Record<string, string> }} Manifest
 */

/** Every path an exports map names, under any condition. */
function exportTargets(value) {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(exportTargets);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(exportTargets);
  return [];
}

/** @param {Manifest} manifest @returns {string[]} the dist/ files the manifest names. */
export function builtFiles(manifest) {
  const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
  const files = [...exportTargets(manifest.exports), manifest.main, manifest.module, manifest.types, ...bins];
  const paths = files.filter((file) => typeof file === 'string').map((file) => file.replace(/^\.\//, ''));
  return [...new Set(paths.filter((file) => file.startsWith('dist/')))].sort();
}

async function mtime(path) {
  return stat(path).then(
    (stats) => stats.mtimeMs,
    () => undefined,
  );
}

/** @returns {Promise<Map<string, { dir: string, manifest: Manifest }>>} packages/* by package name. */
async function workspacePackages(root) {
  const packagesDir = join(root, 'packages');
  const folders = (await readdir(packagesDir, { withFileTypes: true })).filter((entry) => entry.isDirectory());
  const found = await Promise.all(
    folders.map(async ({ name }) => {
      const dir = join(packagesDir, name);
      const text = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined);
      return text === undefined ? undefined : { dir, manifest: /** @type {Manifest} */ (JSON.parse(text)) };
    }),
  );
  return new Map(found.filter((pkg) => pkg !== undefined).map((pkg) => [pkg.manifest.name, pkg]));
}

/** @param {string} root @returns {Promise<string[]>} the name of every package under packages/. */
export async function workspacePackageNames(root) {
  return [...(await workspacePackages(root)).keys()].sort();
}

/**
 * The pnpm that runs the calling script (`pnpm demo`, `pnpm bench`), or the project's own
 * through npx when the script was run directly. @param {string} root @returns {Promise<string[]>}
 */
export async function pnpmCommand(root) {
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm/.test(execPath)) return [execPath];
  const { packageManager } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  return ['npx', '-y', packageManager];
}

/** @param {{ dir: string, manifest: Manifest }} pkg @returns {Promise<boolean>} */
export async function needsBuild({ dir, manifest }) {
  const built = await Promise.all(builtFiles(manifest).map((file) => mtime(join(dir, file))));
  if (built.length === 0 || built.some((time) => time === undefined)) return true;
  const sources = await readdir(join(dir, 'src'), { recursive: true }).catch(() => []);
  const inputs = await Promise.all(
    ['package.json', 'tsup.config.ts', ...sources.map((file) => join('src', file))].map((file) =>
      mtime(join(dir, file)),
    ),
  );
  return Math.min(...built) < Math.max(...inputs.map((time) => time ?? 0));
}

/**
 * The packages among `names` and the workspace packages they depend on (`workspace:` ranges, all
 * the way down) whose dist/ is missing or older than their src/: empty when all are built.
 * @param {string} root @param {string[]} names @returns {Promise<string[]>}
 */
export async function staleBuilds(root, names) {
  const packages = await workspacePackages(root);
  const chain = new Set();
  const visit = (name) => {
    const pkg = packages.get(name);
    if (pkg === undefined || chain.has(name)) return;
    chain.add(name);
    for (const [dependency, range] of Object.entries(pkg.manifest.dependencies ?? {}))
      if (range.startsWith('workspace:')) visit(dependency);
  };
  for (const name of names) visit(name);
  const stale = await Promise.all([...chain].map(async (name) => ((await needsBuild(packages.get(name))) ? name : '')));
  return stale.filter((name) => name !== '').sort();
}
