import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { openContentStore } from '@agentproto/content-cache';
import { tempDir } from './temp.js';

/** Files to write: text, or `{ text, mode }`, or `{ link }` for a symlink. */
export type Spec = Record<string, string | { text: string; mode: number } | { link: string }>;

export async function writeSpec(root: string, spec: Spec): Promise<void> {
  for (const [path, value] of Object.entries(spec)) {
    const target = join(root, path);
    await mkdir(dirname(target), { recursive: true });
    if (typeof value === 'string') await writeFile(target, value);
    else if ('link' in value) await symlink(value.link, target);
    else {
      await writeFile(target, value.text);
      await chmod(target, value.mode);
    }
  }
}

export async function newCache() {
  const root = join(await tempDir(), 'store');
  return openContentStore({ root });
}
