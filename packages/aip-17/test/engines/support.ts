import { randomInt } from 'node:crypto';
import { chmod, readdir } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tarOf, tempDirs } from '@agentproto/testkit';
import { defineRunner } from '../../src/index.js';
import type { RunnerDefinition, RunnerHost } from '../../src/index.js';

/** An AIP-26 bundle (tar.gz) of `files`, each path → content; `.sh` files executable. */
export async function bundleOf(files: Record<string, string>): Promise<Buffer> {
  const entries = Object.entries(files).map(([name, data]) => ({
    name,
    data,
    mode: name.endsWith('.sh') ? 0o755 : 0o644,
  }));
  return gzipSync(await tarOf(entries));
}

/** A handle as a host makes one: `defineRunner` with the block and the run. */
export function handleFor(definition: RunnerDefinition, host: RunnerHost = {}) {
  return defineRunner(definition, host);
}

/** Digits no other process on the machine has in its command line. */
export function marker(): string {
  return `${1000 + randomInt(1000)}${randomInt(1_000_000_000)}`;
}

/** Live processes (zombies are dead) whose command line holds `mark`. */
export function alive(mark: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(mark)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

const dirs = tempDirs('aip17-engines-');

/**
 * A work folder for runs: traversable by the sandbox's account (nobody, as root), as the
 * system temp folder is. Every run folder made in it must be gone after a run.
 */
export async function workDir(): Promise<string> {
  const dir = await dirs.make();
  await chmod(dir, 0o711);
  return dir;
}

export const removeWorkDirs = () => dirs.removeAll();

export async function leftIn(dir: string): Promise<string[]> {
  return readdir(dir);
}

export const PATH_ENV = { PATH: '/usr/bin:/bin' };
