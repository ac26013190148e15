import { spawnSync } from 'node:child_process';
import { access, readdir, realpath, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { StoredTree } from '@agentproto/content-cache';
import { describe, expect, it } from 'vitest';
import { runJson } from '../support/run.js';
import { scratchFolders, writeSampleSkill } from '../support/scratch.js';

const scratch = scratchFolders();

describe('agentproto cache put never stores a .git entry', () => {
  it('stores a folder that is a git checkout without its .git, under the digest of the tree without it, and git status in the stored folder runs nothing', async () => {
    const base = await realpath(await scratch());
    const skill = await writeSampleSkill(join(base, 'hello'));
    const before = await runJson<StoredTree>(['cache', 'put', skill, '--store', join(base, 'store-before')]);
    const marker = join(base, 'marker');
    const git = (...args: string[]) => {
      // core.fsmonitor=false on the command line wins over the hostile one written below.
      const result = spawnSync(
        'git',
        ['-C', skill, '-c', 'core.fsmonitor=false', '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args],
        { encoding: 'utf8' },
      );
      expect(result.status, result.stderr).toBe(0);
    };
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'one');
    await writeFile(join(skill, '.git', 'config'), `[core]\n\tfsmonitor = "touch ${marker}; false"\n`, { flag: 'a' });

    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', join(base, 'store')]);
    expect(await readdir(tree.path)).not.toContain('.git');
    expect(tree.digest).toBe(before.digest);
    expect(tree.files).toBe(before.files);
    spawnSync('git', ['-C', tree.path, 'status'], {
      env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(tree.path) },
    });
    await expect(access(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
