import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExtractIOError, extractTarGz, writeBundle } from '../src/tar/index.js';
import { gnuLongName, entry, tarGz } from './fixtures/tar/craft.js';
import { tempDir } from './fixtures/tar/temp.js';

/** Deterministic bytes, different for every file. */
function bytesOf(seed: number, size: number): Buffer {
  return Buffer.alloc(size, `${seed}:${seed * 7919};`);
}

describe('extractTarGz: files written in batches by a thread of its own', () => {
  it('writes every byte of many files spanning many batches: empty, small, one just past the streaming size, executables', async () => {
    const sizes = [0, 1, 511, 512, 513, 4096, 70_000, 300_000, 0, 3];
    const entries = Array.from({ length: 700 }, (_, i) => ({
      path: `d${i % 7}/e${i % 3}/f${String(i).padStart(4, '0')}.bin`,
      data: bytesOf(i, i === 350 ? (1 << 20) + 1 : sizes[i % sizes.length]! + (i % 13)),
      executable: i % 5 === 0,
    }));
    const total = entries.reduce((n, e) => n + e.data.length, 0);
    const dest = join(await tempDir(), 'out');
    const result = await extractTarGz(await writeBundle(entries), dest, {
      maxBytes: total + 2048 * entries.length,
      maxFiles: entries.length,
    });
    expect(result.bytes).toBe(total);
    expect(result.files).toHaveLength(entries.length);
    for (const { path, data, executable } of entries) {
      const written = await readFile(join(dest, path));
      expect(written.equals(data), path).toBe(true);
      expect((await stat(join(dest, path))).mode & 0o777, path).toBe(executable ? 0o755 : 0o644);
    }
    for (const folder of ['d0', 'd6/e2']) expect((await stat(join(dest, folder))).mode & 0o7777).toBe(0o755);
  });

  it('reports a file the filesystem refuses as ExtractIOError naming it, after earlier files were written, leaving nothing', async () => {
    const parent = await tempDir();
    const tooLong = `ok/${'n'.repeat(300)}`; // a safe name, but longer than any file name Linux takes
    const archive = tarGz(
      ...Array.from({ length: 50 }, (_, i) => entry({ name: `ok/f${i}` }, bytesOf(i, 5000))),
      gnuLongName(tooLong),
      entry({ name: tooLong.slice(0, 99) }, 'x'),
      ...Array.from({ length: 50 }, (_, i) => entry({ name: `later/f${i}` }, 'y')),
    );
    const error = await extractTarGz(archive, join(parent, 'out'), { maxBytes: 1 << 20, maxFiles: 200 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ExtractIOError);
    expect(error).toMatchObject({ code: 'AIP26_EXTRACT_IO', step: 'create file', errno: 'ENAMETOOLONG' });
    expect((error as ExtractIOError).path.endsWith(tooLong)).toBe(true);
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('ENAMETOOLONG');
    expect(await readdir(parent)).toEqual([]);
  });

  it('stops a file being streamed when the filesystem refuses it, leaving nothing', async () => {
    const parent = await tempDir();
    const tooLong = `big/${'n'.repeat(300)}`;
    const archive = tarGz(gnuLongName(tooLong), entry({ name: tooLong.slice(0, 99) }, bytesOf(1, 3 << 20)));
    const error = await extractTarGz(archive, join(parent, 'out'), { maxBytes: 8 << 20, maxFiles: 10 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'AIP26_EXTRACT_IO', step: 'create file', errno: 'ENAMETOOLONG' });
    expect(await readdir(parent)).toEqual([]);
  });
});
