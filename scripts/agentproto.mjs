#!/usr/bin/env node
// `npx -y pnpm@12.4.2 agentproto …` at the root of a clone: the agentproto command, with no
// build step. When dist/ of the cli and of every workspace package it depends on is newer than
// their src/, this runs the built bin in this process (as fast as an installed one); otherwise
// (a fresh clone, an edit since the last build) it runs packages/cli/src through tsx with the
// `@agentproto/source` condition, as the tests do. AGENTPROTO_FROM_SOURCE=1 always takes src/.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuilds } from './workspace-builds.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'packages', 'cli');
const args = process.argv.slice(2);
// pnpm runs a root script at the root; the paths a user gives are relative to where they typed.
const cwd = process.env.INIT_CWD && existsSync(process.env.INIT_CWD) ? process.env.INIT_CWD : process.cwd();

const stale =
  process.env.AGENTPROTO_FROM_SOURCE === '1'
    ? ['AGENTPROTO_FROM_SOURCE=1']
    : await staleBuilds(root, ['@agentproto/cli']);

if (stale.length === 0) {
  // The bin the package installs: the CommonJS build (see packages/cli/src/bin.ts).
  const bin = join(cli, 'dist', 'bin.cjs');
  process.chdir(cwd);
  process.argv = [process.argv[0], bin, ...args];
  createRequire(import.meta.url)(bin);
} else {
  if (process.stderr.isTTY)
    process.stderr.write(
      `agentproto: running from src/ (${stale.join(', ')}: dist/ missing or older than src/); \`pnpm build\` starts it faster\n`,
    );
  const child = spawn(
    process.execPath,
    ['--conditions=@agentproto/source', '--import', import.meta.resolve('tsx'), join(cli, 'src', 'bin.ts'), ...args],
    { cwd, stdio: 'inherit' },
  );
  // A terminal's Ctrl-C reaches both processes; a signal sent to this one alone is passed on.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`agentproto: could not start ${process.execPath}: ${error.message}\n`);
    process.exitCode = 1;
  });
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
  });
}
