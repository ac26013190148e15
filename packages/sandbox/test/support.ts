import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultRunAs } from '../src/index.js';

/** A test folder the sandbox's account can read (root hosts run sandboxes as nobody). */
export function testFolder(prefix: string): {
  root: string;
  readable(name: string): string;
  writable(name: string): string;
  remove(): void;
} {
  const root = mkdtempSync(join(tmpdir(), `agentproto-sandbox-${prefix}-`));
  chmodSync(root, 0o755);
  return {
    root,
    readable(name) {
      const path = join(root, name);
      mkdirSync(path, { recursive: true, mode: 0o755 });
      return path;
    },
    writable(name) {
      const path = join(root, name);
      mkdirSync(path, { recursive: true, mode: 0o700 });
      const { uid, gid } = defaultRunAs();
      if (uid !== process.getuid?.()) chownSync(path, uid, gid);
      return path;
    },
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A token no other process on this machine has in its command line. */
export function marker(): string {
  return `${Math.floor(Math.random() * 1e9)}`;
}

/** Host pids of processes whose command line contains `text`. */
function processesWith(text: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmdline.includes(text) && state !== 'Z') pids.push(Number(name));
    } catch {
      // Gone.
    }
  }
  return pids;
}

/** Host pids of the `/bin/sleep 300.<tag>` processes the tests leave behind on purpose. */
export function sleepers(tag: string): number[] {
  return processesWith(`/bin/sleep\0${300}.${tag}\0`).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith('/bin/sleep\0');
    } catch {
      return false;
    }
  });
}

export async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

export const PATH = '/usr/bin:/bin';
