import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makePrivateDir, openContentStore, removePrivateDir, sweepPrivateDirs } from '../../src/index.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentproto-private-'));
  made.push(dir);
  return dir;
}

/** An owner record as makePrivateDir writes it, for a process of our choosing. */
async function ownerRecord(pid: number, start: string): Promise<string> {
  const boot = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  return JSON.stringify({ pid, start, boot, pidNamespace: await readlink('/proc/self/ns/pid') });
}

/** A folder made by hand the way makePrivateDir lays it out, owned by `record`. */
async function plantFolder(root: string, record: string): Promise<string> {
  const id = `p-${randomBytes(12).toString('hex')}`;
  await mkdir(join(root, id), { recursive: true, mode: 0o700 });
  await writeFile(join(root, id, 'deploy-key'), 'SECRET-KEY');
  await writeFile(join(root, `${id}.owner`), record);
  return join(root, id);
}

/** The pid of a process that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid!;
}

describe('private folders under the store root', () => {
  it('are made 0700 under a 0700 root, each with an owner record, and removed with their record', async () => {
    const root = join(await scratch(), 'private');
    const dir = await makePrivateDir(root);
    expect((await lstat(root)).mode & 0o777).toBe(0o700);
    expect((await lstat(dir)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(`${dir}.owner`, 'utf8'))).toMatchObject({ pid: process.pid });
    await writeFile(join(dir, 'key'), 'SECRET');
    await removePrivateDir(dir);
    expect(await readdir(root)).toEqual([]);
  });

  it('sweeps a folder whose owner has exited, one whose pid was reused (another start time), and one without a record; never a live one', async () => {
    const root = join(await scratch(), 'private');
    const live = await makePrivateDir(root);
    await writeFile(join(live, 'deploy-key'), 'LIVE');
    const exited = await plantFolder(root, await ownerRecord(await deadPid(), '1'));
    // This very process's pid with a start time it never had: what a reused pid looks like.
    const reused = await plantFolder(root, await ownerRecord(process.pid, '1'));
    const orphan = join(root, `p-${randomBytes(12).toString('hex')}`);
    await mkdir(orphan, { mode: 0o700 });
    await writeFile(join(orphan, 'header.gitconfig'), 'SECRET');

    expect(await sweepPrivateDirs(root)).toBe(3);
    for (const dir of [exited, reused, orphan]) await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(join(live, 'deploy-key'), 'utf8')).toBe('LIVE');
    expect((await readdir(root)).sort()).toEqual(
      [live.slice(root.length + 1), `${live.slice(root.length + 1)}.owner`].sort(),
    );
  });

  it('never follows a link while removing: a link to a file outside is unlinked, the file is untouched', async () => {
    const outside = join(await scratch(), 'precious');
    await writeFile(outside, 'KEEP');
    const root = join(await scratch(), 'private');
    const dir = await makePrivateDir(root);
    await symlink(outside, join(dir, 'link'));
    await removePrivateDir(dir);
    expect(await readFile(outside, 'utf8')).toBe('KEEP');
  });

  it('refuses a private root that is a link (planted to redirect credentials)', async () => {
    const base = await scratch();
    await mkdir(join(base, 'elsewhere'));
    await symlink(join(base, 'elsewhere'), join(base, 'private'));
    await expect(makePrivateDir(join(base, 'private'))).rejects.toThrow(/not a folder/);
  });

  it('store.gc() sweeps <root>/private', async () => {
    const store = await openContentStore({ root: join(await scratch(), 'store') });
    expect(store.privateRoot).toBe(join(store.root, 'private'));
    await mkdir(store.privateRoot, { mode: 0o700 });
    await plantFolder(store.privateRoot, await ownerRecord(await deadPid(), '1'));
    expect((await store.gc()).removedPrivate).toBe(1);
    expect(await readdir(store.privateRoot)).toEqual([]);
  });
});
