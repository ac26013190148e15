import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePrivateDir } from '@agentproto/content-cache';
import { run, runJson } from '../support/run.js';
import { scratchFolders } from '../support/scratch.js';

const scratch = scratchFolders();

/** The pid of a process that has exited and been reaped: the owner of a killed preparation's folder. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid!;
}

/** A private folder left by a preparation killed while it held a deploy key. */
async function leftBehind(privateRoot: string, secret: string): Promise<void> {
  const id = `p-${randomBytes(12).toString('hex')}`;
  await mkdir(join(privateRoot, id), { recursive: true, mode: 0o700 });
  await writeFile(join(privateRoot, id, 'resolve-deploy-key'), secret, { mode: 0o600 });
  const boot = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  const record = { pid: await deadPid(), start: '1', boot, pidNamespace: await readlink('/proc/self/ns/pid') };
  await writeFile(join(privateRoot, `${id}.owner`), JSON.stringify(record));
}

describe('agentproto cache gc and credentials', () => {
  it('removes the private folders of killed preparations, and never a live one', async () => {
    const root = join(await scratch(), 'store');
    const privateRoot = join(root, 'private');
    const secret = `-----KEY ${randomBytes(16).toString('hex')}-----`;
    await leftBehind(privateRoot, secret);
    await leftBehind(privateRoot, secret);
    const live = await makePrivateDir(privateRoot);
    await writeFile(join(live, 'resolve-deploy-key'), 'live key');

    expect(await runJson(['cache', 'gc', '--store', root])).toMatchObject({ removedPrivate: 2 });
    expect((await readdir(privateRoot)).sort()).toEqual(
      [live.slice(privateRoot.length + 1), `${live.slice(privateRoot.length + 1)}.owner`].sort(),
    );
    expect(await readFile(join(live, 'resolve-deploy-key'), 'utf8')).toBe('live key');

    await leftBehind(privateRoot, secret);
    const outcome = await run(['cache', 'gc', '--store', root]);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('1 private folder of dead preparations');
  });
});
