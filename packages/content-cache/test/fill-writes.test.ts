import { readFile, stat } from 'node:fs/promises';
import { statfsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inMemoryFilesystem, nodeStoreFs, pooledWriteFile } from '../src/store-fs.js';
import { fillWriteFile } from '../src/writer.js';
import { tempDir } from './support/temp.js';

describe('how a fill writes its files', () => {
  it('tells a folder in memory (tmpfs) from one that is not', () => {
    // The premise: this Linux mounts tmpfs at /dev/shm; /proc is procfs.
    expect(statfsSync('/dev/shm').type).toBe(0x01021994);
    expect(inMemoryFilesystem('/dev/shm')).toBe(true);
    expect(inMemoryFilesystem('/proc')).toBe(false);
    expect(inMemoryFilesystem('/no/such/folder')).toBe(false);
  });

  it('writes synchronously in memory, through the thread pool elsewhere, and a custom StoreFs its own way', () => {
    expect(fillWriteFile(nodeStoreFs, '/dev/shm')).toBe(nodeStoreFs.writeFile);
    expect(fillWriteFile(nodeStoreFs, '/proc')).toBe(pooledWriteFile);
    const custom = { ...nodeStoreFs, writeFile: async () => {} };
    expect(fillWriteFile(custom, '/proc')).toBe(custom.writeFile);
  });

  it('writes through the pool with the mode asked for, and refuses to replace a file with `wx`', async () => {
    const dir = await tempDir();
    const file = join(dir, 'run.sh');
    await pooledWriteFile(file, Buffer.from('#!/bin/sh\n'), { mode: 0o755, flag: 'wx' });
    expect(await readFile(file, 'utf8')).toBe('#!/bin/sh\n');
    expect((await stat(file)).mode & 0o7777).toBe(0o755 & ~process.umask());
    await expect(pooledWriteFile(file, 'again', { flag: 'wx' })).rejects.toMatchObject({ code: 'EEXIST' });
  });
});
