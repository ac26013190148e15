import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openContentStore } from '@agentproto/content-cache';
import { run } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import {
  BundleSizeError,
  BundleWriteError,
  SourceResolutionError,
  type Code,
  type WorkspaceFs,
  defineCodeToFile,
  defineCodeWithReport,
  nodeWorkspaceFs,
} from '../src/index.js';
import { makeWorkspace, tempDir } from './support/workspace.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * A workspace of `files` files of about `size` bytes under src/: hex digests, which compress to
 * about half, so 100 files of 30 kB make a bundle of several 1 MiB blocks and ~1.5 MB.
 */
async function sourceTree(files: number, size: number, extra: Record<string, string> = {}): Promise<string> {
  const spec: Record<string, string> = { ...extra };
  for (let i = 0; i < files; i++) {
    const lines: string[] = [];
    for (let n = 0; lines.length * 72 < size; n++) lines.push(`// ${sha256(Buffer.from(`${i}:${n}`))}\n`);
    spec[`src/m${String(i).padStart(3, '0')}/f.js`] = lines.join('');
  }
  return makeWorkspace(spec);
}

/** The names in `dir`, to prove no temporary file is left beside the output. */
const namesIn = async (dir: string) => (await readdir(dir)).sort();

describe('defineCodeToFile: the bundle defineCodeWithReport returns, written as it is compressed', () => {
  it('writes the same bytes and report for one workspace folder (packed while listed), several sources, and a cached build', async () => {
    const root = await sourceTree(120, 30_000);
    const out = await tempDir();
    for (const [name, code] of [
      ['listed', { sources: [{ local: 'src/' }] }],
      ['merged', { sources: [{ local: 'src/' }, { inline: { path: 'config.json', content: '{}' } }] }],
    ] as [string, Code][]) {
      const path = join(out, `${name}.tar.gz`);
      const expected = await defineCodeWithReport({ workspaceRoot: root, code });
      const report = await defineCodeToFile({ workspaceRoot: root, code }, path);
      const written = await readFile(path);
      expect(written.equals(expected.bundle)).toBe(true);
      expect(report).toEqual(expected.report);
      expect(report.sha256).toBe(sha256(written));
      expect(report.compressedBytes).toBe(written.length);
    }
    // With a store: built once, then read back from it (a pinned plan), both into the file.
    const cache = await openContentStore({ root: join(out, 'store') });
    const pinned = { sources: [{ inline: { path: 'a.txt', content: 'a\n' } }] };
    const expected = await defineCodeWithReport({ workspaceRoot: root, code: pinned });
    for (const round of ['built', 'from the store']) {
      const path = join(out, `pinned-${round}.tar.gz`);
      const report = await defineCodeToFile({ workspaceRoot: root, code: pinned, cache }, path);
      expect((await readFile(path)).equals(expected.bundle), round).toBe(true);
      expect(report.sha256, round).toBe(expected.report.sha256);
    }
    expect((await namesIn(out)).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('names listed out of archive order after blocks were written: starts the file over and writes the sorted bytes', async () => {
    // The listing sorts U+1F600 before U+E000 (UTF-16), the archive after (UTF-8). The folder
    // holding them is listed only once the file has over 1 MB in it: the writer that packs
    // while listing has written blocks when it declines.
    const root = await sourceTree(100, 30_000, { 'src/zz/\u{1f600}.txt': 'smile', 'src/zz/\ue000.txt': 'private' });
    const out = await tempDir();
    const path = join(out, 'bundle.tar.gz');
    const disk = nodeWorkspaceFs(root);
    let writtenBeforeDecline = 0;
    const fs: WorkspaceFs = {
      ...disk,
      readFileInto: disk.readFileInto!.bind(disk),
      async readDir(folder) {
        if (folder.endsWith('zz'))
          for (let waited = 0; waited < 10_000 && writtenBeforeDecline < 1_000_000; waited += 10) {
            await new Promise((resolve) => setTimeout(resolve, 10));
            const partial = (await readdir(out)).find((name) => name.endsWith('.partial'));
            if (partial) writtenBeforeDecline = (await stat(join(out, partial))).size;
          }
        return disk.readDir(folder);
      },
    };
    const code = { sources: [{ local: 'src/' }] };
    const report = await defineCodeToFile({ workspaceRoot: root, code, fs }, path);
    expect(writtenBeforeDecline).toBeGreaterThan(1_000_000);
    const expected = await defineCodeWithReport({ workspaceRoot: root, code });
    expect((await readFile(path)).equals(expected.bundle)).toBe(true);
    expect(report.sha256).toBe(expected.report.sha256);
    expect(await namesIn(out)).toEqual(['bundle.tar.gz']);
  });

  it('replaces the file there, and a link at the path is replaced, never written through', async () => {
    const root = await sourceTree(3, 100);
    const out = await tempDir();
    const path = join(out, 'bundle.tar.gz');
    const victim = join(out, 'victim.txt');
    await writeFile(victim, 'host file\n');
    await symlink(victim, path);
    const report = await defineCodeToFile({ workspaceRoot: root, code: { sources: [{ local: 'src/' }] } }, path);
    expect((await lstat(path)).isFile()).toBe(true);
    expect(sha256(await readFile(path))).toBe(report.sha256);
    expect(await readFile(victim, 'utf8')).toBe('host file\n');
    // And again over the file it wrote.
    await defineCodeToFile({ workspaceRoot: root, code: { sources: [{ inline: { path: 'x', content: 'x' } }] } }, path);
    expect(sha256(await readFile(path))).not.toBe(report.sha256);
    expect(await namesIn(out)).toEqual(['bundle.tar.gz', 'victim.txt']);
  });

  it('a refusal after blocks were written leaves the file as it was and no temporary file', async () => {
    const root = await sourceTree(100, 30_000);
    const out = await tempDir();
    const path = join(out, 'bundle.tar.gz');
    await writeFile(path, 'the previous bundle\n');
    const code = { sources: [{ local: 'src/' }] };
    // Over the byte cap two thirds of the way: several blocks were compressed and written by then.
    await expect(
      defineCodeToFile({ workspaceRoot: root, code, limits: { maxBytes: 2_000_000 } }, path),
    ).rejects.toBeInstanceOf(BundleSizeError);
    const aborted = new AbortController();
    aborted.abort(new Error('host shutting down'));
    await expect(defineCodeToFile({ workspaceRoot: root, code, signal: aborted.signal }, path)).rejects.toThrow(
      'host shutting down',
    );
    await expect(
      defineCodeToFile({ workspaceRoot: root, code: { sources: [{ local: 'missing/' }] } }, path),
    ).rejects.toBeInstanceOf(SourceResolutionError);
    expect(await readFile(path, 'utf8')).toBe('the previous bundle\n');
    expect(await namesIn(out)).toEqual(['bundle.tar.gz']);
  });

  it('a path it cannot write is a BundleWriteError naming the path and the step, and leaves nothing', async () => {
    const root = await sourceTree(3, 100);
    const out = await tempDir();
    const code = { sources: [{ local: 'src/' }] };
    const missing = join(out, 'no-such-folder', 'bundle.tar.gz');
    const created = await defineCodeToFile({ workspaceRoot: root, code }, missing).catch((error: unknown) => error);
    expect(created).toBeInstanceOf(BundleWriteError);
    expect(created).toMatchObject({ code: 'AIP26_BUNDLE_WRITE', step: 'create', errno: 'ENOENT', path: missing });
    expect((created as Error).message).toContain(JSON.stringify(missing));

    await mkdir(join(out, 'a-folder'));
    const renamed = await defineCodeToFile({ workspaceRoot: root, code }, join(out, 'a-folder')).catch(
      (error: unknown) => error,
    );
    expect(renamed).toMatchObject({ code: 'AIP26_BUNDLE_WRITE', step: 'rename', errno: 'EISDIR' });
    expect(await namesIn(out)).toEqual(['a-folder']);

    if (process.getuid?.() !== 0) {
      await chmod(join(out, 'a-folder'), 0o500);
      await expect(
        defineCodeToFile({ workspaceRoot: root, code }, join(out, 'a-folder', 'b.tar.gz')),
      ).rejects.toMatchObject({
        step: 'create',
        errno: 'EACCES',
      });
    }
  });

  it('a write the file system refuses (a file size cap) is a BundleWriteError at write, and the temporary file is gone', async () => {
    // 12 MB in: the writer is still packing when the write fails, and stops for it.
    const root = await sourceTree(400, 30_000);
    const out = await tempDir();
    const path = join(out, 'bundle.tar.gz');
    await writeFile(path, 'the previous bundle\n');
    const script = fileURLToPath(new URL('./fixtures/define-code-to-file.ts', import.meta.url));
    const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
    // RLIMIT_FSIZE of 400 KB for the child: its writes past that fail with EFBIG (SIGXFSZ is ignored there).
    const result = await run(
      'prlimit',
      ['--fsize=400000', process.execPath, '--conditions=@agentproto/source', '--import', 'tsx', script, root, path],
      { cwd: repoRoot },
    );
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({
      name: 'BundleWriteError',
      code: 'AIP26_BUNDLE_WRITE',
      step: 'write',
      errno: 'EFBIG',
      path,
    });
    expect(await readFile(path, 'utf8')).toBe('the previous bundle\n');
    expect(await namesIn(out)).toEqual(['bundle.tar.gz']);
  });
});
