import { defineConfig } from 'tsup';

/**
 * The build every public package shares: ESM, CJS and declarations for Node 20.
 * `bundle` names ESM-only dependencies to inline: before Node 20.19 the CJS build could
 * not `require` them.
 */
export function packageBuild(entry: string[] = ['src/index.ts'], bundle: string[] = []) {
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
  });
}
