import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, getPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

  it('takes the results out of an answer that carries more, and says when every item is answered', async () => {
    // The worker hands back the buffer it was sent, with the results beside it.
    const returned: ArrayBuffer[] = [];
    let idle = 0;
    const threads = new ThreadBatches<number, number>({
      source: `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ items, buffer }) => {
  const sum = new Uint8Array(buffer).reduce((a, b) => a + b, 0);
  parentPort.postMessage({ results: items.map(() => sum), buffer }, [buffer]);
});
`,
      threads: 2,
      maxItems: 4,
      message: (items) => {
        const buffer = new Uint8Array(items);
        return { value: { items, buffer: buffer.buffer }, transfer: [buffer.buffer] };
      },
      results: (answer) => {
        const { results, buffer } = answer as { results: number[]; buffer: ArrayBuffer };
        returned.push(buffer);
        return results;
      },
      idle: () => {
        idle += 1;
      },
    });
    const sums = await Promise.all([1, 2, 3, 4, 5, 6].map((item) => threads.run(item)));
    // Each item answered with the sum of its own batch: 1+2+3+4 and 5+6, or as the turns split them.
    expect(sums.reduce((a, b) => a! + b!, 0)).toBe(
      returned.reduce((total, buffer) => {
        const bytes = new Uint8Array(buffer);
        return total + bytes.length * bytes.reduce((a, b) => a + b, 0);
      }, 0),
    );
    expect(returned.map((buffer) => buffer.byteLength).reduce((a, b) => a + b, 0)).toBe(6);
    expect(idle).toBeGreaterThanOrEqual(1);
    const before = idle;
    await threads.run(7);
    expect(idle).toBe(before + 1);
  });

  it('lets the process exit once every item is answered, whatever threads it started', async () => {
    // A thread's 'message' listener refs its port: a thread left idle with it would keep a
    // host process alive after its work is done.
    const script = fileURLToPath(new URL('./support/threads-then-exit.ts', import.meta.url));
    const child = spawn(process.execPath, ['--conditions=@agentproto/source', '--import', 'tsx', script], {
      cwd: fileURLToPath(new URL('../../../', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    const exited = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('still running after 20 s');
      }, 20_000);
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve(code ?? String(signal));
      });
    });
    expect(out.trim()).toBe('answered');
    expect(exited).toBe(0);
  }, 30_000);

  it.runIf(process.platform === 'linux')(
    'runs every thread ten nice levels below the thread that starts it, so the feeding thread runs first',
    async () => {
      // Each item is answered with the answering thread's own nice value, read by its id.
      const threads = new ThreadBatches<number, number>({
        source: `
const { parentPort } = require('node:worker_threads');
const { getPriority } = require('node:os');
const id = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
parentPort.on('message', (items) => parentPort.postMessage(items.map(() => getPriority(id))));
`,
        threads: 2,
        maxItems: 1,
        message: (items) => ({ value: items }),
      });
      const nice = await Promise.all([threads.run(1), threads.run(2), threads.run(3)]);
      // getPriority() with no id is the calling thread's on Linux: the one the threads inherit from.
      expect(nice).toEqual([1, 2, 3].map(() => Math.min(19, getPriority() + 10)));
    },
  );

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

  it('carries batches in buffers the threads hand back, no more than can be outstanding, dropped once idle', async () => {
    const dir = await tempDir();
    const spare = () => (fileWriter as unknown as { spare: ArrayBuffer[] }).spare;
    const files = Array.from({ length: 400 }, (_, i) => Buffer.alloc(60_000 + i, `${i}:`));
    const hashes = await Promise.all(files.map((bytes, i) => fileWriter.write(join(dir, `f${i}`), bytes, 0o644)));
    for (const [i, bytes] of files.entries()) expect(hashes[i]).toBe(sha256(bytes));
    // 23 MiB went in batches of about 1 MiB: the same few buffers carried them all.
    const kept = spare();
    expect(kept.length).toBeGreaterThanOrEqual(1);
    expect(kept.length).toBeLessThanOrEqual(2 * Math.min(4, availableParallelism()));
    expect(new Set(kept).size).toBe(kept.length);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(spare()).toEqual([]);
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
