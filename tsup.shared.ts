import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineConfig } from 'tsup';

/** Where the licences of the dependencies a package's dist inlines are shipped. */
const INLINED_LICENSES = 'dist/THIRD-PARTY-LICENSES.md';

/**
 * The file inlined for a dependency whose published entry does not suit one file. yaml: its
 * node entry is 72 CommonJS modules (Node 20 loaded them in 60-80 ms, one inlined file in
 * ~20), and it requires 'process', which an ES module bundle cannot; its ES module build
 * does neither.
 */
const INLINED_FILES: Record<string, string> = { yaml: 'browser/index.js' };

/**
 * The build every public package shares: ESM, CJS and declarations for Node 20.
 * `bundle` names dependencies to inline: ESM-only ones (before Node 20.19 the CJS build could
 * not `require` them), and ones made of many small modules, which load several times faster
 * as one (from the file INLINED_FILES names, if any). Each inlined dependency's licence ships
 * in INLINED_LICENSES.
 */
export function packageBuild(entry: string[] = ['src/index.ts'], bundle: string[] = []) {
  const aliases = Object.fromEntries(
    bundle
      .filter((name) => name in INLINED_FILES)
      .map((name) => [name, join(dependencyFolder(name), INLINED_FILES[name]!)]),
  );
  return defineConfig({
    entry,
    noExternal: bundle,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    // import.meta.url in the CJS build (a lazy createRequire): tsup's shim makes it this file's URL.
    shims: true,
    esbuildOptions(options) {
      if (Object.keys(aliases).length > 0) options.alias = { ...options.alias, ...aliases };
    },
    onSuccess: async () => {
      if (bundle.length > 0) writeFileSync(INLINED_LICENSES, inlinedLicenses(bundle));
    },
  });
}

/** The folder of dependency `name` as the package in `from` (default: the working directory) resolves it. */
export function dependencyFolder(name: string, from = process.cwd()): string {
  const require = createRequire(join(from, 'package.json'));
  // Its entry, then up to the package.json that names it: not every package exports ./package.json.
  let folder = dirname(require.resolve(name));
  for (;;) {
    try {
      if ((JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: string }).name === name)
        return folder;
    } catch {
      // No package.json here: go up.
    }
    const parent = dirname(folder);
    if (parent === folder) throw new Error(`no package.json of ${name} above ${require.resolve(name)}`);
    folder = parent;
  }
}

/** Each inlined dependency: name, version, licence and the text of its licence file. */
function inlinedLicenses(names: string[]): string {
  const sections = names.map((name) => {
    const folder = dependencyFolder(name);
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
      version: string;
      license?: string;
    };
    const file = readdirSync(folder).find((entry) => /^licen[cs]e(\.(md|txt))?$/i.test(entry));
    if (file === undefined) throw new Error(`${name} ships no licence file to inline with it`);
    const text = readFileSync(join(folder, file), 'utf8').trim();
    return `## ${name} ${manifest.version} (${manifest.license ?? 'see below'})\n\n\`\`\`\n${text}\n\`\`\`\n`;
  });
  return `# Licences of the dependencies inlined in this package's dist/\n\n${sections.join('\n')}`;
}
