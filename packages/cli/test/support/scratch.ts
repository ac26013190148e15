import { chmod, lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * Fresh folders under os.tmpdir(), removed after each test. Published objects may be
 * read-only, so every folder is made writable before removal.
 */
export function scratchFolders(): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    for (const folder of made.splice(0)) {
      await makeFoldersWritable(folder);
      await rm(folder, { recursive: true, force: true });
    }
  });
  return async () => {
    const folder = await mkdtemp(join(tmpdir(), 'agentproto-cli-'));
    made.push(folder);
    return folder;
  };
}

async function makeFoldersWritable(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (!info?.isDirectory()) return;
  await chmod(path, 0o755);
  for (const name of await readdir(path)) await makeFoldersWritable(join(path, name));
}

/**
 * A small skill folder: SKILL.md, an executable script, a reference file and a relative
 * link to it. Returns the folder.
 */
export async function writeSampleSkill(folder: string, description = 'Greets the user.'): Promise<string> {
  const files: Record<string, string> = {
    'SKILL.md': `---\nname: hello\ndescription: ${description}\n---\n# Hello\n`,
    'scripts/run.sh': '#!/bin/sh\necho "Hello, ${1:-world}!"\n',
    'references/greeting.md': 'Say hello.\n',
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeFile(join(folder, path), text);
  }
  await chmod(join(folder, 'scripts/run.sh'), 0o755);
  await symlink('references/greeting.md', join(folder, 'GREETING.md'));
  return folder;
}
