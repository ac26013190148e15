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
  });
}
