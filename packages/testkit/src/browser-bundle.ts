import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface BrowserBundle {
  /** The minified ESM bundle. */
  code: string;
  bytes: number;
  /** Its size gzipped at level 9, what a server sends. */
  gzipBytes: number;
  /** Bytes of output per input package (`name@version`) or workspace file. */
  inputs: Map<string, number>;
}

/**
 * Bundles `source` (an ES module's text) for a browser, as a web product's bundler would:
 * esbuild's browser platform (the `browser` export condition, no Node built-in resolvable),
 * minified ESM (or an IIFE assigning `globalName`). `conditions` adds export conditions
 * (`@agentproto/source` for the sources).
 * A Node built-in anywhere in the module graph fails the build.
 */
export async function bundleForBrowser(
  source: string,
  resolveDir: string,
  options: { conditions?: string[]; format?: 'esm' | 'iife'; globalName?: string } = {},
): Promise<BrowserBundle> {
  const result = await build({
    stdin: { contents: source, resolveDir, loader: 'ts', sourcefile: 'entry.ts' },
    bundle: true,
    platform: 'browser',
    format: options.format ?? 'esm',
    ...(options.globalName === undefined ? {} : { globalName: options.globalName }),
    target: 'es2022',
    minify: true,
    write: false,
    metafile: true,
    conditions: options.conditions ?? [],
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error('esbuild wrote no bundle');
  const inputs = new Map<string, number>();
  for (const [file, { bytesInOutput }] of Object.entries(Object.values(result.metafile.outputs)[0]?.inputs ?? {})) {
    const key = /node_modules\/\.pnpm\/([^/]+)/.exec(file)?.[1] ?? file.replace(/^(\.\.\/)+/, '');
    inputs.set(key, (inputs.get(key) ?? 0) + bytesInOutput);
  }
  return {
    code: output.text,
    bytes: output.contents.length,
    gzipBytes: gzipSync(output.contents, { level: 9 }).length,
    inputs,
  };
}
