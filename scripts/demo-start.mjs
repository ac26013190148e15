#!/usr/bin/env node
// `pnpm demo`: builds the packages the tour imports when their dist/ is missing or older than
// src/, quietly (the build's output is printed only if it fails, and then in full, with its exit
// code), makes sure git is installed, then runs the tour (scripts/demo.ts) with the arguments
// given (`pnpm demo --json`). Nothing of the build reaches the screen on success, so the tour
// starts at the top of it. AGENTPROTO_DEMO_WORKSPACE names another workspace to check, build
// and tour (its packages/* and scripts/demo.ts): test/demo points it at a small copy whose
// build is stale, or fails.
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pnpmCommand, staleBuilds } from './workspace-builds.mjs';

const scripts = fileURLToPath(new URL('.', import.meta.url));
const root = process.env.AGENTPROTO_DEMO_WORKSPACE || join(scripts, '..');
/** What scripts/demo.ts imports; staleBuilds adds the workspace packages they depend on. */
const TOUR_PACKAGES = [
  '@agentproto/aip-26',
  '@agentproto/agent-plugins',
  '@agentproto/content-cache',
  '@agentproto/skill-providers',
  '@agentproto/testkit',
];

const stale = await staleBuilds(root, TOUR_PACKAGES);
if (stale.length > 0) {
  const terminal = process.stderr.isTTY === true;
  const count = `${stale.length} package${stale.length === 1 ? '' : 's'}`;
  if (terminal) process.stderr.write(`building ${count} before the tour…`);
  // Only the stale packages: tsup leaves workspace dependencies external, so a fresh one stays as it is.
  const filters = stale.flatMap((name) => ['--filter', name]);
  const pnpm = await pnpmCommand(root);
  const build = spawnSync(pnpm[0], [...pnpm.slice(1), '-r', ...filters, 'build'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  // The progress line is erased: the tour's first line goes where it was.
  if (terminal) process.stderr.write('\r\x1b[2K');
  if (build.error !== undefined || build.status !== 0) {
    process.stdout.write(build.stdout ?? '');
    process.stderr.write(build.stderr ?? '');
    const how = build.error ? build.error.message : build.signal ? `killed by ${build.signal}` : `exit ${build.status}`;
    process.stderr.write(`demo: building ${stale.join(', ')} failed (${how}); the build's output is above\n`);
    process.exit(build.status || 1);
  }
}

const git = spawnSync(process.execPath, [join(scripts, 'ensure-system-deps.mjs'), 'git'], { stdio: 'inherit' });
if (git.status !== 0) process.exit(git.status || 1);

const tour = spawn(
  process.execPath,
  ['--import', import.meta.resolve('tsx'), join(root, 'scripts', 'demo.ts'), ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => tour.kill(signal));
tour.on('exit', (code, signal) => {
  process.exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
});
