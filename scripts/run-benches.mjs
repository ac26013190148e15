#!/usr/bin/env node
// Runs every bench/*.bench.ts, in name order, each in its own node process so one
// benchmark's heap and file cache do not skew the next. Optional arguments keep only the
// files whose name contains one of them: `pnpm bench content-cache`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

const failed = [];
for (const name of chosen) {
  console.log(`\n== bench/${name}`);
  const result = spawnSync(
    process.execPath,
    ['--conditions=@agentproto/source', '--import', tsx, join('bench', name)],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (result.status !== 0) failed.push(`${name} (${result.signal ?? `exit ${result.status}`})`);
}
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
