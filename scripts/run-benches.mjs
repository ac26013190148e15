#!/usr/bin/env node
// Runs every bench/*.bench.ts, in name order, each in its own node process so one
// benchmark's heap and file cache do not skew the next. Optional arguments keep only the
// files whose name contains one of them: `pnpm bench content-cache`.
//
// The benchmarks measure the packages as a host imports them: their built dist/, not src/
// through tsx (which the tests use). tsx compiles with esbuild's keepNames, which wraps every
// named function and class in a call that sets its name: on the same sources, defineCode of
// 2,000 files took 3.6% longer that way (paired median, 10 fresh processes each). So every
// workspace package whose dist/ is missing or older than its src/ is built first; the bench
// files themselves still run through tsx.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pnpmCommand, staleBuilds, workspacePackageNames } from './workspace-builds.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const filters = process.argv.slice(2);

const all = readdirSync(join(root, 'bench'))
  .filter((name) => name.endsWith('.bench.ts'))
  .sort();
const chosen = filters.length === 0 ? all : all.filter((name) => filters.some((filter) => name.includes(filter)));
if (chosen.length === 0) {
  console.error(`no benchmark matches ${filters.join(', ')}; there are: ${all.join(', ') || 'none'}`);
  process.exit(1);
}

const stale = await staleBuilds(root, await workspacePackageNames(root));
if (stale.length > 0) {
  console.log(`building ${stale.join(', ')} (dist/ missing or older than src/): the benchmarks measure dist/`);
  const pnpm = await pnpmCommand(root);
  const only = stale.flatMap((name) => ['--filter', name]);
  const build = spawnSync(pnpm[0], [...pnpm.slice(1), '-r', ...only, 'build'], { cwd: root, stdio: 'inherit' });
  if (build.error !== undefined || build.status !== 0) {
    const how = build.error ? build.error.message : build.signal ? `killed by ${build.signal}` : `exit ${build.status}`;
    console.error(`bench: building ${stale.join(', ')} failed (${how})`);
    process.exit(build.status || 1);
  }
}

const failed = [];
for (const name of chosen) {
  console.log(`\n== bench/${name}`);
  const result = spawnSync(process.execPath, ['--import', tsx, join('bench', name)], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) failed.push(`${name} (${result.signal ?? `exit ${result.status}`})`);
}
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
