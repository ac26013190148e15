// Builds the static page into dist/: index.html and style.css as they are, and app.js, the
// page's script with the agent-plugins browser entry bundled in (esbuild, the `browser` export
// condition, minified). A classic script, not a module, so dist/index.html also opens from disk.
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('..', import.meta.url));
export const PAGE_DIR = join(here, 'dist');

/**
 * Builds the page into dist/ and returns the folder. `sources`: bundle the workspace's
 * TypeScript sources (the `@agentproto/source` condition) rather than the packages' dist/;
 * the default is what this process runs with.
 */
export async function buildPage(
  sources = process.execArgv.some((arg) => arg.includes('@agentproto/source')),
): Promise<string> {
  const out = PAGE_DIR;
  await mkdir(out, { recursive: true });
  await build({
    entryPoints: [join(here, 'src/page.ts')],
    outfile: join(out, 'app.js'),
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    conditions: sources ? ['@agentproto/source'] : [],
    logLevel: 'warning',
  });
  for (const file of ['index.html', 'style.css']) await copyFile(join(here, 'static', file), join(out, file));
  return out;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(`built ${await buildPage()}`);
}
