import { spawn } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

  it('writes every name exactly, whatever its characters: non-ASCII, astral, combining, spaces, under stripped folders', async () => {
    const names = ['é/ü.txt', 'a b/c d.md', '𝒜/😀.js', 'e\u0301/x', '日本/語.ts', 'plain'];
    const archive = tarGz(...names.map((name, i) => entry({ name: `top/${name}` }, bytesOf(i, 100 + i))));
    const dest = join(await tempDir(), 'out');
    const result = await extractTarGz(archive, dest, { maxBytes: 1 << 20, maxFiles: 10, stripComponents: 1 });
    expect([...result.files].sort()).toEqual([...names].sort());
    for (const [i, name] of names.entries())
      expect((await readFile(join(dest, name))).equals(bytesOf(i, 100 + i))).toBe(true);
  });

  it('keeps its thread only from a clean extraction: after a failure, one after another and several at once, every file is exact', async () => {
    const files = (tag: string) =>
      Array.from({ length: 40 }, (_, i) => ({ path: `${tag}/f${i}.txt`, data: bytesOf(i + tag.length, 3000 + i) }));
    const options = { maxBytes: 1 << 22, maxFiles: 100 };
    const check = async (dest: string, entries: ReturnType<typeof files>) => {
      for (const { path, data } of entries) expect((await readFile(join(dest, path))).equals(data), path).toBe(true);
    };
    const parent = await tempDir();
    const tooLong = `bad/${'n'.repeat(300)}`;
    const failing = tarGz(
      entry({ name: 'bad/ok' }, 'x'),
      gnuLongName(tooLong),
      entry({ name: tooLong.slice(0, 99) }, 'y'),
    );
    await expect(extractTarGz(failing, join(parent, 'failed'), options)).rejects.toBeInstanceOf(ExtractIOError);
    for (const tag of ['first', 'second']) {
      await extractTarGz(await writeBundle(files(tag)), join(parent, tag), options);
      await check(join(parent, tag), files(tag));
    }
    const together = ['x', 'yy', 'zzz'];
    await Promise.all(
      together.map(async (tag) => extractTarGz(await writeBundle(files(tag)), join(parent, tag), options)),
    );
    for (const tag of together) await check(join(parent, tag), files(tag));
    expect((await readdir(parent)).sort()).toEqual(['first', 'second', 'x', 'yy', 'zzz']);
  });

  it('never holds the process open: it exits on its own right after an extraction', async () => {
    const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
    const script = fileURLToPath(new URL('./fixtures/tar/extract-then-exit.ts', import.meta.url));
    const parent = await tempDir();
    const child = spawn(process.execPath, ['--conditions=@agentproto/source', '--import', 'tsx', script, parent], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let extractedAt = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
      if (extractedAt === 0 && out.includes('extracted')) extractedAt = Date.now();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(out).toBe('extracted\n');
    // A kept thread that held the process would keep it until its idle stop (10 s).
    expect(Date.now() - extractedAt).toBeLessThan(5000);
    expect(await readFile(join(parent, 'out', 'a', 'b.txt'), 'utf8')).toBe('kept thread');
  });
});
