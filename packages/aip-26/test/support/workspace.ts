import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile, chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tempDirs } from '@agentproto/testkit';
import { afterEach } from 'vitest';

const temp = tempDirs('aip26-');
afterEach(() => temp.removeAll());

export const tempDir: (prefix?: string) => Promise<string> = temp.make;

export type TreeSpec = Record<string, string | { content: string; mode?: number } | { symlink: string }>;

/** A workspace folder with the given files, modes and links. */
export async function makeWorkspace(spec: TreeSpec): Promise<string> {
  const root = await tempDir('aip26-ws-');
  for (const [path, value] of Object.entries(spec)) {
    const abs = join(root, path);
    await mkdir(dirname(abs), { recursive: true });
    if (typeof value === 'string') await writeFile(abs, value);
    else if ('symlink' in value) await symlink(value.symlink, abs);
    else {
      await writeFile(abs, value.content);
      if (value.mode !== undefined) await chmod(abs, value.mode);
    }
  }
  return root;
}

/** Every file and link below `root`, with contents, to prove a call wrote nothing. */
export async function snapshot(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const abs = join(entry.parentPath, entry.name);
    out.push(
      `${abs.slice(root.length)} ${entry.isFile() ? (await readFile(abs)).toString('base64') : entry.isSymbolicLink() ? 'link' : 'dir'}`,
    );
  }
  return out.sort();
}

/** Extracts a tar.gz with GNU tar and returns path → [content, mode]. */
export async function extractWithGnuTar(bundle: Buffer): Promise<Map<string, { text: string; mode: number }>> {
  const dir = await tempDir('aip26-x-');
  execFileSync('tar', ['-xzf', '-', '-C', dir], { input: bundle });
  const files = new Map<string, { text: string; mode: number }>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const abs = join(entry.parentPath, entry.name);
    const { statSync } = await import('node:fs');
    files.set(abs.slice(dir.length + 1), { text: await readFile(abs, 'utf8'), mode: statSync(abs).mode & 0o777 });
  }
  return files;
}
