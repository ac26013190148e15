#!/usr/bin/env node
// A first look at the SDK: the built `agentproto` command stores a small skill folder in a
// content cache, finds it again without copying, lists, verifies and collects the store.
// Everything happens under one temporary folder, removed at the end.
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
if (!existsSync(bin)) {
  console.error(`demo: ${bin} is missing; build first: npx -y pnpm@12.4.2 build`);
  process.exit(1);
}

const work = await mkdtemp(join(tmpdir(), 'agentproto-demo-'));
const store = join(work, 'store');
const skill = join(work, 'hello-skill');

const SAMPLE = {
  'SKILL.md': '---\nname: hello-skill\ndescription: Greets someone by name. Use when the user says hello.\n---\n\n# Hello\n\nRun `scripts/run.sh NAME`; the tone is in references/tone.md.\n',
  'scripts/run.sh': '#!/bin/sh\necho "Hello, ${1:-world}!"\n',
  'references/tone.md': 'Warm and short.\n',
};

const steps = [
  ['Store the sample skill (a miss: the folder is copied in)', ['cache', 'put', skill, '--root', store]],
  ['Store it again (a hit: fromCache is true, nothing is copied)', ['cache', 'put', skill, '--root', store]],
  ['List what the store holds', ['cache', 'ls', '--root', store]],
  ['Re-hash every object against its completion marker', ['cache', 'verify', '--root', store]],
  ['Collect what nothing reaches (here: nothing)', ['cache', 'gc', '--root', store]],
];

let failed = false;
try {
  for (const [path, text] of Object.entries(SAMPLE)) {
    await mkdir(dirname(join(skill, path)), { recursive: true });
    await writeFile(join(skill, path), text);
  }
  await chmod(join(skill, 'scripts/run.sh'), 0o755);
  console.log(`sample skill: ${skill}\nstore:        ${store}`);

  for (const [heading, args] of steps) {
    console.log(`\n# ${heading}\n$ agentproto ${args.join(' ')}`);
    const { status, signal } = spawnSync(process.execPath, [bin, ...args], { stdio: 'inherit' });
    if (status !== 0) {
      console.error(`demo: step failed (${signal ?? `exit ${status}`}): agentproto ${args.join(' ')}`);
      failed = true;
      break;
    }
  }
} finally {
  // Stored objects may be read-only; make every folder writable so they can be removed.
  spawnSync('chmod', ['-R', 'u+w', work]);
  await rm(work, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
