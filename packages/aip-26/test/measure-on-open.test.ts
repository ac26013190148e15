import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { measureOnOpenOf, workspaceReaderOf } from '../src/workspace/node-workspace-fs.js';
import {
  BundleSizeError,
  RunFileMissingError,
  WorkspaceChangedError,
  WorkspaceLinkError,
  type BundleReport,
  type DefineCodeOptions,
  type WorkspaceFs,
  defineCode,
  defineCodeToFile,
  defineCodeWithReport,
  nodeWorkspaceFs,
  readBundleEntries,
} from '../src/index.js';
import { makeWorkspace, tempDir } from './support/workspace.js';

const LIMITS = { maxBytes: 64 * 1024 * 1024, maxFiles: 1_000 };

/**
 * A bundle of one workspace folder, in memory or written to a file, lists that folder
 * without a `stat` of each file: each file is measured by the descriptor it is opened with
 * when the archive reaches it (see MeasureOnOpen). These pin down that reader and that the
 * bundle, its report and its refusals are the ones a listing that measures gives (a copy of
 * the reader, which is always called as it is: see `measured`).
 */
describe('nodeWorkspaceFs: a listing without a stat of each file, files measured as they are opened', () => {
  it('lists files without size or mode, and gives them from the open descriptor', async () => {
    const root = await makeWorkspace({
      'src/a.txt': 'aaaa',
      'src/run.sh': { content: '#!/bin/sh\n', mode: 0o755 },
      'src/inner/b.txt': 'b',
      'src/link.txt': { symlink: 'a.txt' },
    });
    const fs = nodeWorkspaceFs(root);
    const measure = measureOnOpenOf(fs)!;
    const entries = await measure.readDir('src');
    const byName = Object.fromEntries(entries.map((entry) => [entry.name, entry]));
    expect(byName['a.txt']).toEqual({ name: 'a.txt', type: 'file' });
    expect(byName.inner).toEqual({ name: 'inner', type: 'directory' });
    // A link is followed (and proven inside) while listing, as readDir does: it comes measured.
    expect(byName['link.txt']).toEqual({ name: 'link.txt', type: 'file', size: 4, executable: false });
    // readDir itself still measures every file.
    expect((await fs.readDir('src')).find((entry) => entry.name === 'a.txt')).toEqual({
      name: 'a.txt',
      type: 'file',
      size: 4,
      executable: false,
    });

    const script = await measure.open('src/run.sh');
    expect([script.size, script.executable]).toEqual([10, true]);
    const bytes = Buffer.alloc(script.size);
    script.readInto(bytes);
    script.close();
    expect(bytes.toString()).toBe('#!/bin/sh\n');
  });

  it('belongs to the reader nodeWorkspaceFs made, never to a copy or wrapper of it', async () => {
    const fs = nodeWorkspaceFs(await makeWorkspace({ 'a.txt': 'a' }));
    expect(measureOnOpenOf(fs)).toBeDefined();
    expect(measureOnOpenOf({ ...fs })).toBeUndefined();
    expect(measureOnOpenOf(Object.create(fs) as WorkspaceFs)).toBeUndefined();
  });

  it("the object's functions are its own: they work taken out of it, and its reader (called directly by the bundle writer) is that object's only", async () => {
    const root = await makeWorkspace({ 'manifest.yaml': 'code: src/\n', 'src/a.txt': 'aaaa' });
    const fs = nodeWorkspaceFs(root);
    expect(Object.keys(fs).sort()).toEqual(['readDir', 'readFile', 'readFileInto', 'readManifest', 'stat']);
    const { readFile, readFileInto, readDir, stat, readManifest } = fs;
    expect(Buffer.from(await readFile('src/a.txt')).toString()).toBe('aaaa');
    const target = Buffer.alloc(4);
    await readFileInto!('src/a.txt', target);
    expect(target.toString()).toBe('aaaa');
    expect(await readDir('src')).toEqual([{ name: 'a.txt', type: 'file', size: 4, executable: false }]);
    expect(await stat!('src/a.txt')).toEqual({ type: 'file', size: 4, executable: false });
    expect(await stat!('missing.txt')).toBeUndefined();
    expect(await readManifest('')).toEqual({ code: 'src/' });
    // A spread copy, or an object built on it, is the host's own: never passed by.
    expect(workspaceReaderOf(fs)).toBeDefined();
    expect(workspaceReaderOf({ ...fs })).toBeUndefined();
    expect(workspaceReaderOf(Object.create(fs) as WorkspaceFs)).toBeUndefined();
  });

  it('measures a file when it opens it: one that grew since the listing is read whole at its new size', async () => {
    const root = await makeWorkspace({ 'src/a.txt': 'a' });
    const measure = measureOnOpenOf(nodeWorkspaceFs(root))!;
    await measure.readDir('src');
    await writeFile(join(root, 'src/a.txt'), 'a'.repeat(5000));
    const file = await measure.open('src/a.txt');
    expect(file.size).toBe(5000);
    const bytes = Buffer.alloc(file.size);
    file.readInto(bytes);
    file.close();
    expect(bytes.toString()).toBe('a'.repeat(5000));
  });

  it('refuses a file that grows or shrinks between its open and its read, and what is no file any more', async () => {
    const root = await makeWorkspace({ 'src/a.txt': 'a'.repeat(100), 'src/b.txt': 'b'.repeat(100), 'src/c.txt': 'c' });
    const measure = measureOnOpenOf(nodeWorkspaceFs(root))!;
    for (const [name, content] of [
      ['a.txt', 'a'.repeat(101)],
      ['b.txt', 'b'.repeat(99)],
    ]) {
      const file = await measure.open(`src/${name}`);
      await writeFile(join(root, 'src', name!), content!);
      expect(() => file.readInto(Buffer.alloc(file.size))).toThrow(WorkspaceChangedError);
      file.close();
    }
    // A folder where the file was listed, and a link out where it was.
    await rm(join(root, 'src/c.txt'));
    await mkdir(join(root, 'src/c.txt'));
    await expect(measure.open('src/c.txt')).rejects.toBeInstanceOf(WorkspaceChangedError);
    const outside = await makeWorkspace({ 'secret.txt': 'outside' });
    await rm(join(root, 'src/c.txt'), { recursive: true });
    await symlink(join(outside, 'secret.txt'), join(root, 'src/c.txt'));
    const refused = await measure.open('src/c.txt').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WorkspaceLinkError);
    expect(String(refused)).not.toContain('outside');
  });
});

/** The bundle of `args` by a listing that measures each file: through a copy of the reader, called as it is. */
function measured(args: DefineCodeOptions & { workspaceRoot: string }) {
  return defineCodeWithReport({ ...args, fs: { ...nodeWorkspaceFs(args.workspaceRoot) } });
}

/** The bundle of `args` in memory, and written to a file: the two writers that measure files as they open them. */
async function bothWriters(args: DefineCodeOptions): Promise<{ bundle: Buffer; report: BundleReport }[]> {
  const inMemory = await defineCodeWithReport(args);
  const path = join(await tempDir(), 'bundle.tar.gz');
  const report = await defineCodeToFile(args, path);
  return [inMemory, { bundle: await readFile(path), report }];
}

describe('one folder listed without a stat of each file, in memory or to a file, gives what a measuring listing gives', () => {
  /** A folder of files over several 1 MiB blocks, with an executable, a link and a nested folder. */
  async function workspace(extra: Record<string, string> = {}) {
    const spec: Parameters<typeof makeWorkspace>[0] = {
      'src/bin/tool.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
      'src/empty.txt': '',
      'src/alias.js': { symlink: 'm000/f.js' },
      ...extra,
    };
    for (let i = 0; i < 120; i++)
      spec[`src/m${String(i).padStart(3, '0')}/f.js`] = `// ${i}\n${Buffer.alloc(30_000, `${i} `).toString()}`;
    return makeWorkspace(spec);
  }

  it('the same bytes, modes and report', async () => {
    const root = await workspace();
    const code = { sources: [{ local: 'src/' }] };
    const expected = await measured({ workspaceRoot: root, code });
    for (const { bundle, report } of await bothWriters({ workspaceRoot: root, code })) {
      expect(bundle.equals(expected.bundle)).toBe(true);
      expect(report).toEqual(expected.report);
      expect(report.bytes).toBeGreaterThan(3_600_000);
      const entries = await readBundleEntries(bundle, LIMITS);
      expect(entries.find((entry) => entry.path === 'src/bin/tool.sh')?.executable).toBe(true);
      expect(entries.find((entry) => entry.path === 'src/empty.txt')?.data.length).toBe(0);
    }
  });

  it('a bundle past 32 MiB compressed, its size known only at its end in memory: the same bytes and report', async () => {
    const root = await makeWorkspace({ 'src/notes.txt': 'incompressible files follow' });
    for (let i = 0; i < 20; i++) await writeFile(join(root, `src/r${i}.bin`), randomBytes(2 << 20));
    const code = { sources: [{ local: 'src/' }] };
    const expected = await measured({ workspaceRoot: root, code });
    expect(expected.bundle.length).toBeGreaterThan(40 << 20);
    for (const { bundle, report } of await bothWriters({ workspaceRoot: root, code })) {
      expect(bundle.equals(expected.bundle)).toBe(true);
      expect(report).toEqual(expected.report);
    }
  });

  it('names listed out of archive order: measured and packed the sorted way, the same bytes and report', async () => {
    // The listing sorts U+1F600 before U+E000 (UTF-16), the archive after (UTF-8): the writer
    // that packs while listing declines, and the files are measured and packed in order.
    const root = await workspace({ 'src/zz/\u{1f600}.txt': 'smile', 'src/zz/\ue000.txt': 'private' });
    const code = { sources: [{ local: 'src/' }] };
    const expected = await measured({ workspaceRoot: root, code });
    for (const { bundle, report } of await bothWriters({ workspaceRoot: root, code })) {
      expect(bundle.equals(expected.bundle)).toBe(true);
      expect(report).toEqual(expected.report);
    }
  });

  it('the byte limit refuses at the same file with the same count, before a byte of it is read, and before the run file is missing', async () => {
    const root = await workspace();
    const code = { sources: [{ local: 'src/' }] };
    const out = await tempDir();
    for (const run of [undefined, 'src/missing.py']) {
      const args = { workspaceRoot: root, code, run, limits: { maxBytes: 2_000_000 } };
      const expected = await measured(args)
        .then(() => undefined)
        .catch((error: unknown) => error);
      expect(expected).toBeInstanceOf(BundleSizeError);
      const refusals = [
        await defineCodeWithReport(args).catch((error: unknown) => error),
        await defineCodeToFile(args, join(out, 'b.tar.gz')).catch((error: unknown) => error),
      ];
      for (const refused of refusals) {
        expect(refused).toBeInstanceOf(BundleSizeError);
        expect({ ...(refused as BundleSizeError) }).toEqual({ ...(expected as BundleSizeError) });
        expect((refused as Error).message).toBe((expected as Error).message);
      }
    }
    // Under the limit, the missing run file is what is refused.
    await expect(defineCodeWithReport({ workspaceRoot: root, code, run: 'src/missing.py' })).rejects.toBeInstanceOf(
      RunFileMissingError,
    );
    await expect(
      defineCodeToFile({ workspaceRoot: root, code, run: 'src/missing.py' }, join(out, 'c.tar.gz')),
    ).rejects.toBeInstanceOf(RunFileMissingError);
    expect(await readdir(out)).toEqual([]);
  });

  it('a file of 8 GiB (sparse) is refused when it is opened, before any of it is read or a buffer for it is made', async () => {
    const root = await workspace();
    const huge = join(root, 'src/m050/huge.bin');
    await writeFile(huge, '');
    await truncate(huge, 8 * 2 ** 30);
    const out = await tempDir();
    const args = { workspaceRoot: root, code: { sources: [{ local: 'src/' }] } };
    for (const write of [() => defineCode(args), () => defineCodeToFile(args, join(out, 'b.tar.gz'))]) {
      const started = performance.now();
      const before = process.memoryUsage().rss;
      const refused = await write().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BundleSizeError);
      expect(refused).toMatchObject({ limit: 'bytes', max: 100 * 2 ** 20, source: 'sources[0]' });
      expect((refused as BundleSizeError).actual).toBeGreaterThan(8 * 2 ** 30);
      expect(process.memoryUsage().rss - before).toBeLessThan(256 * 2 ** 20);
      expect(performance.now() - started).toBeLessThan(10_000);
    }
    expect(await readdir(out)).toEqual([]);
  });

  it('a host wrapping the reader is always called: what its readDir leaves out is not in the bundle', async () => {
    const root = await workspace({ 'src/secret.env': 'TOKEN=canary-not-for-the-bundle' });
    const disk = nodeWorkspaceFs(root);
    const fs: WorkspaceFs = {
      ...disk,
      readDir: async (folder) => (await disk.readDir(folder)).filter((entry) => !entry.name.endsWith('.env')),
    };
    const path = join(await tempDir(), 'bundle.tar.gz');
    const report = await defineCodeToFile({ workspaceRoot: root, code: { sources: [{ local: 'src/' }] }, fs }, path);
    const tar = gunzipSync(await readFile(path));
    expect(tar.includes('canary-not-for-the-bundle')).toBe(false);
    expect(report.files).toBe(123);
  });

  it('a host wrapping the reader is always called by a bundle built in memory too: its readDir and readFileInto are the ones used', async () => {
    const root = await workspace({ 'src/secret.env': 'TOKEN=canary-not-for-the-bundle' });
    const disk = nodeWorkspaceFs(root);
    const read: string[] = [];
    const fs: WorkspaceFs = {
      ...disk,
      readDir: async (folder) => (await disk.readDir(folder)).filter((entry) => !entry.name.endsWith('.env')),
      readFileInto: async (path, target) => {
        read.push(path);
        await disk.readFileInto!(path, target);
      },
    };
    const { bundle, report } = await defineCodeWithReport({
      workspaceRoot: root,
      code: { sources: [{ local: 'src/' }] },
      fs,
    });
    expect(gunzipSync(bundle).includes('canary-not-for-the-bundle')).toBe(false);
    expect(report.files).toBe(123);
    // Every file but the empty one went through the host's readFileInto.
    expect(read).toHaveLength(122);
    expect(read).toContain('src/m000/f.js');
  });

  it("a host that puts its own readDir into nodeWorkspaceFs's object itself is called too, by both writers", async () => {
    const root = await workspace({ 'src/secret.env': 'TOKEN=canary-not-for-the-bundle' });
    const fs = nodeWorkspaceFs(root);
    const disk = fs.readDir;
    fs.readDir = async (folder) => (await disk(folder)).filter((entry) => !entry.name.endsWith('.env'));
    expect(workspaceReaderOf(fs)).toBeUndefined();
    expect(measureOnOpenOf(fs)).toBeUndefined();
    const args = { workspaceRoot: root, code: { sources: [{ local: 'src/' }] }, fs };
    const { bundle, report } = await defineCodeWithReport(args);
    expect(gunzipSync(bundle).includes('canary-not-for-the-bundle')).toBe(false);
    expect(report.files).toBe(123);
    const path = join(await tempDir(), 'bundle.tar.gz');
    expect((await defineCodeToFile(args, path)).files).toBe(123);
    expect(gunzipSync(await readFile(path)).includes('canary-not-for-the-bundle')).toBe(false);
  });

  it('a file replaced by a larger one after the listing is packed whole as it was when opened', async () => {
    // The last folder is listed before its files are read; its file is swapped right after
    // the listing of its folder, so the bundle has it at the size its descriptor gives.
    const root = await workspace();
    const grown = 'grown '.repeat(50_000);
    const disk = nodeWorkspaceFs(root);
    const measure = measureOnOpenOf(disk)!;
    const listed = measure.readDir.bind(measure);
    measure.readDir = async (folder) => {
      const entries = await listed(folder);
      if (folder === 'src/m119') {
        await writeFile(join(root, 'src/m119/next.js'), grown);
        await rename(join(root, 'src/m119/next.js'), join(root, 'src/m119/f.js'));
      }
      return entries;
    };
    for (const { bundle, report } of await bothWriters({
      workspaceRoot: root,
      code: { sources: [{ local: 'src/' }] },
      fs: disk,
    })) {
      const entries = await readBundleEntries(bundle, LIMITS);
      expect(entries.find((entry) => entry.path === 'src/m119/f.js')?.data.toString()).toBe(grown);
      expect(report.bytes).toBe(entries.reduce((sum, entry) => sum + entry.data.length, 0));
    }
  });
});
