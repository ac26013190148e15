import { existsSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Imports module specifiers the way a module in `folder` would: a package name is looked up
 * in `folder`'s node_modules and its parents', where a deployment installed it. (A plain
 * `import()` inside this library would look in the library's own folder, which with
 * isolated node_modules, as pnpm makes them, sees only the library's own dependencies.)
 * File URLs, absolute paths and `node:` built-ins are imported as they are.
 */
export function importFrom(folder: string): (specifier: string) => Promise<unknown> {
  return async (specifier) => import(resolveFrom(folder, specifier));
}

/**
 * What `import()` is given for `specifier` from `folder`: a file URL, or the specifier itself.
 * ESM's lookup, done by hand because Node 20 resolves from another folder only behind a flag:
 * the package `folder` belongs to when it is the one named (a self-reference), else the
 * nearest `node_modules/<name>` above `folder`; then its `exports` under the `node`,
 * `import` and `default` conditions (in the order the package lists them), else `main`,
 * else `index.js`. NODE_PATH is not searched, as ESM does not.
 */
export function resolveFrom(folder: string, specifier: string): string {
  if (specifier.startsWith('file:') || isBuiltin(specifier)) return specifier;
  if (isAbsolute(specifier)) return pathToFileURL(specifier).href;
  const match = /^((?:@[^/]+\/)?[^/]+)(\/.*)?$/.exec(specifier);
  if (!match || specifier.startsWith('.'))
    throw new Error(`"${specifier}" is neither a package name nor an absolute path`);
  const [, name, rest] = match as unknown as [string, string, string | undefined];
  const subpath = rest === undefined ? '.' : `.${rest}`;
  const own = selfReference(folder, name, subpath);
  if (own !== undefined) return own;
  for (let dir = folder; ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name);
    if (existsSync(join(root, 'package.json'))) {
      const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        exports?: unknown;
        main?: unknown;
      };
      const entry =
        manifest.exports === undefined
          ? fallbackEntry(manifest.main, subpath)
          : exportedEntry(manifest.exports, subpath);
      if (entry === undefined) throw new Error(`the package "${name}" does not export "${subpath}" for import`);
      return pathToFileURL(join(root, entry)).href;
    }
    if (dirname(dir) === dir) break;
  }
  throw new Error(`no package "${specifier}" is installed in ${folder} or a folder above it`);
}

/** A package importing itself by its own name (allowed when it has `exports`): the nearest package.json above `folder`. */
function selfReference(folder: string, name: string, subpath: string): string | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        exports?: unknown;
      };
      if (manifest.name !== name || manifest.exports === undefined) return undefined;
      const entry = exportedEntry(manifest.exports, subpath);
      return entry === undefined ? undefined : pathToFileURL(join(dir, entry)).href;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function fallbackEntry(main: unknown, subpath: string): string {
  if (subpath !== '.') return subpath;
  return typeof main === 'string' ? main : 'index.js';
}

/** The target of `subpath` in an `exports` field, for an importer on Node. */
function exportedEntry(exports: unknown, subpath: string): string | undefined {
  const isSubpathMap =
    typeof exports === 'object' &&
    exports !== null &&
    !Array.isArray(exports) &&
    Object.keys(exports).some((key) => key.startsWith('.'));
  if (!isSubpathMap) return subpath === '.' ? conditionTarget(exports) : undefined;
  return conditionTarget((exports as Record<string, unknown>)[subpath]);
}

const CONDITIONS = new Set(['node', 'import', 'default']);

function conditionTarget(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) {
    for (const candidate of target) {
      const found = conditionTarget(candidate);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof target !== 'object' || target === null) return undefined;
  // The first listed condition that applies wins, as in Node's resolver.
  for (const [condition, value] of Object.entries(target)) {
    if (!CONDITIONS.has(condition)) continue;
    const found = conditionTarget(value);
    if (found !== undefined) return found;
  }
  return undefined;
}
