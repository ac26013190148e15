import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileWriter } from '../src/file-writer.js';
import { ThreadBatches } from '../src/thread-batches.js';
import { tempDir } from './support/temp.js';

/** A worker that answers each item with the size of the batch it came in, `null` for a negative one, and exits on 'exit'. */
const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (items) => {
  if (items.includes('exit')) process.exit(3);
  parentPort.postMessage(items.map((item) => (typeof item === 'number' && item < 0 ? null : items.length)));
});
`;

describe('ThreadBatches', () => {
  it('sends what a turn of the event loop brings in batches of at most maxItems, and answers every item', async () => {
    const threads = new ThreadBatches<number, number>({
      source: ECHO,
      threads: 2,
      maxItems: 3,
      message: (items) => ({ value: items }),
    });
    const sizes = await Promise.all(Array.from({ length: 10 }, (_, i) => threads.run(i)));
    expect(sizes.every((size) => size !== undefined && size >= 1 && size <= 3)).toBe(true);
    // Fewer messages than items: the ten did not go one by one.
    expect(sizes.some((size) => size! > 1)).toBe(true);
    expect(await threads.run(-1)).toBeUndefined();
  });

  it('keeps at most two batches outstanding per thread; the rest wait, uncopied, and go as answers come', async () => {
    let messages = 0;
    const threads = new ThreadBatches<number, number>({
      source: ECHO,
      threads: 1,
      maxItems: 2,
      message: (items) => {
        messages += 1;
        return { value: items };
      },
    });
    const all = Array.from({ length: 20 }, (_, i) => threads.run(i));
    expect(messages).toBe(2);
    expect(await Promise.all(all)).toEqual(Array.from({ length: 20 }, () => 2));
    expect(messages).toBe(10);
  });

  it('closes a batch at maxWeight', async () => {
    const threads = new ThreadBatches<number, number>({
      source: ECHO,
      threads: 1,
      maxItems: 100,
      weigh: (item) => item,
      maxWeight: 10,
      message: (items) => ({ value: items }),
    });
    // Weights of 4: a batch closes once it weighs 10 or more, at the third item.
    const sizes = await Promise.all(Array.from({ length: 9 }, () => threads.run(4)));
    expect(Math.max(...(sizes as number[]))).toBeLessThanOrEqual(3);
    expect(sizes.filter((size) => size === 3).length).toBeGreaterThanOrEqual(3);
  });

  it('answers undefined for what a thread owed when it exits, and starts another for what comes next', async () => {
    const threads = new ThreadBatches<number | string, number>({
      source: ECHO,
      threads: 1,
      maxItems: 8,
      message: (items) => ({ value: items }),
    });
    const owed = await Promise.all([threads.run(1), threads.run('exit'), threads.run(2)]);
    expect(owed).toEqual([undefined, undefined, undefined]);
    expect(await threads.run(5)).toBe(1);
  });

  it('answers undefined, without looping, when no thread will start', async () => {
    const threads = new ThreadBatches<number, number>({
      source: 'syntax error here (',
      threads: 2,
      maxItems: 4,
      message: (items) => ({ value: items }),
    });
    expect(await Promise.all([threads.run(1), threads.run(2)])).toEqual([undefined, undefined]);
  });
});

describe('the writer threads', () => {
  const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

  it('writes and hashes many files in flight at once, each at its own offset of a batch', async () => {
    const dir = await tempDir();
    const files = Array.from({ length: 70 }, (_, i) => Buffer.alloc(i * 997, `${i}:`));
    const hashes = await Promise.all(files.map((bytes, i) => fileWriter.write(join(dir, `f${i}`), bytes, 0o644)));
    for (const [i, bytes] of files.entries()) {
      expect(hashes[i]).toBe(sha256(bytes));
      expect(sha256(await readFile(join(dir, `f${i}`)))).toBe(hashes[i]);
    }
  });

  it('creates a file with the mode asked for, less the umask', async () => {
    const dir = await tempDir();
    await fileWriter.write(join(dir, 'run.sh'), Buffer.from('#!/bin/sh\n'), 0o755);
    expect((await lstat(join(dir, 'run.sh'))).mode & 0o7777).toBe(0o755 & ~process.umask());
  });

  it('refuses a file that exists, and never follows a link in its place', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'outside'), 'keep');
    await symlink(join(dir, 'outside'), join(dir, 'link'));
    await symlink(join(dir, 'nowhere'), join(dir, 'dangling'));
    for (const name of ['outside', 'link', 'dangling']) {
      const error = await fileWriter.write(join(dir, name), Buffer.from('forged'), 0o644).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'EEXIST', syscall: 'open', path: join(dir, name) });
    }
    expect(await readFile(join(dir, 'outside'), 'utf8')).toBe('keep');
    expect(await readlink(join(dir, 'dangling'))).toBe(join(dir, 'nowhere'));
    await expect(lstat(join(dir, 'nowhere'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('rejects with the error Node reported, naming the path', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'folder'));
    const missing = join(dir, 'no/such/folder/file');
    await expect(fileWriter.write(missing, Buffer.from('x'), 0o644)).rejects.toMatchObject({
      code: 'ENOENT',
      syscall: 'open',
      path: missing,
    });
    await expect(fileWriter.write(join(dir, 'folder'), Buffer.from('x'), 0o644)).rejects.toMatchObject({
      code: 'EEXIST',
    });
  });
});
