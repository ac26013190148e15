import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { ArchiveError } from '@agentproto/archive';
import { resetResidentPeak, residentPeak } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import {
  ExtractIOError,
  extractTarGz,
  readBundleEntries,
  readTarGz,
  selectFolder,
  writeBundle,
  type ExtractOptions,
} from '../src/tar/index.js';
import { END, entry, gnuLongName, pax, tarGz, zeroBomb } from './fixtures/tar/craft.js';
import { tempDir } from './fixtures/tar/temp.js';

const run = promisify(execFile);
const limits: ExtractOptions = { maxBytes: 1 << 20, maxFiles: 100 };

const file = (name: string, data = 'x', mode?: number) => entry({ name, mode }, data);
const dir = (name: string) => entry({ name, type: '5', mode: 0o755 });

/** Extracts into a fresh `out` under a temp folder; returns the error and what the folder holds after. */
async function extractExpectingError(archive: Buffer, options: ExtractOptions = limits) {
  const parent = await tempDir();
  const dest = join(parent, 'out');
  let error: unknown;
  try {
    await extractTarGz(archive, dest, options);
  } catch (e) {
    error = e;
  }
  return { error, left: await readdir(parent) };
}

async function listTree(root: string): Promise<[string, string, number][]> {
  const out: [string, string, number][] = [];
  const walk = async (rel: string) => {
    for (const dirent of await readdir(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${dirent.name}` : dirent.name;
      const mode = (await stat(join(root, path))).mode & 0o7777;
      if (dirent.isDirectory()) {
        out.push([path, 'dir', mode]);
        await walk(path);
      } else out.push([path, dirent.isFile() ? (await readFile(join(root, path))).toString() : 'OTHER', mode]);
    }
  };
  await walk('');
  return out.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

// Each row: what the archive holds, its bytes, the reason it is refused, the entry named.
const hostile: [string, Buffer, string, string | undefined][] = [
  ['a "../" entry', tarGz(file('../evil')), 'dot-dot', '../evil'],
  ['"a/../../x"', tarGz(file('a/../../x')), 'dot-dot', 'a/../../x'],
  ['a ".." that would stay inside ("a/../b")', tarGz(file('a/../b')), 'dot-dot', 'a/../b'],
  ['a ustar prefix that climbs', tarGz(entry({ name: 'x', prefix: '../..' }, 'x')), 'dot-dot', '../../x'],
  ['an absolute name', tarGz(file('/etc/passwd')), 'absolute-name', '/etc/passwd'],
  ['a Windows drive letter', tarGz(file('C:evil')), 'drive-letter', 'C:evil'],
  ['a Windows drive letter and slash', tarGz(file('c:/evil')), 'drive-letter', 'c:/evil'],
  ['backslashes', tarGz(file('..\\..\\evil')), 'backslash', '..\\..\\evil'],
  ['a symlink to an absolute path', tarGz(entry({ name: 'link', type: '2', linkname: '/etc/passwd' })), 'link', 'link'],
  [
    'a symlink to a relative path',
    tarGz(file('a.txt'), entry({ name: 'link', type: '2', linkname: 'a.txt' })),
    'link',
    'link',
  ],
  [
    'a hard link to an absolute path',
    tarGz(entry({ name: 'hard', type: '1', linkname: '/etc/passwd' })),
    'link',
    'hard',
  ],
  [
    'a hard link to a relative path',
    tarGz(file('a.txt'), entry({ name: 'hard', type: '1', linkname: 'a.txt' })),
    'link',
    'hard',
  ],
  [
    'a symlink, then a file written through it',
    tarGz(entry({ name: 'dir', type: '2', linkname: '/tmp' }), file('dir/evil')),
    'link',
    'dir',
  ],
  ['a character device', tarGz(entry({ name: 'null', type: '3' })), 'special-entry', 'null'],
  ['a block device', tarGz(entry({ name: 'sda', type: '4' })), 'special-entry', 'sda'],
  ['a FIFO', tarGz(entry({ name: 'pipe', type: '6' })), 'special-entry', 'pipe'],
  [
    'an entry type the reader does not know (GNU sparse "S")',
    tarGz(entry({ name: 'sparse', type: 'S' }, 'x')),
    'special-entry',
    'sparse',
  ],
  [
    'a pax path that escapes',
    tarGz(pax('x', [['path', '../../etc/passwd']]), file('innocent.txt')),
    'dot-dot',
    '../../etc/passwd',
  ],
  [
    'a pax path that is absolute',
    tarGz(pax('x', [['path', '/etc/passwd']]), file('innocent.txt')),
    'absolute-name',
    '/etc/passwd',
  ],
  [
    'a pax path holding NUL',
    tarGz(pax('x', [['path', 'a.txt\0.sh']]), file('innocent.txt')),
    'nul-in-name',
    'a.txt\0.sh',
  ],
  ['a GNU long name that escapes', tarGz(gnuLongName('../../x'), file('innocent.txt')), 'dot-dot', '../../x'],
  [
    'a pax global header setting a path',
    tarGz(pax('g', [['path', 'evil']]), file('a.txt')),
    'global-pax-header',
    'a.txt',
  ],
  [
    'a pax global header with a comment and a size',
    tarGz(
      pax('g', [
        ['comment', 'abc'],
        ['size', '0'],
      ]),
      file('a.txt'),
    ),
    'global-pax-header',
    'a.txt',
  ],
  [
    'a pax global header after the last entry',
    tarGz(file('a.txt'), pax('g', [['path', 'evil']])),
    'global-pax-header',
    undefined,
  ],
  ['a file given twice', tarGz(file('a.txt', 'one'), file('a.txt', 'two')), 'duplicate', 'a.txt'],
  ['a file given twice, spelled "./a" and "a"', tarGz(file('./a'), file('a')), 'duplicate', 'a'],
  ['a directory given twice', tarGz(dir('d/'), dir('d/')), 'duplicate', 'd/'],
  ['a file, then a file below it', tarGz(file('a'), file('a/b')), 'file-dir-conflict', 'a/b'],
  ['a file, then a file two folders below it', tarGz(file('a'), file('a/b/c')), 'file-dir-conflict', 'a/b/c'],
  ['a file in a folder, then the folder as a file', tarGz(file('a/b'), file('a')), 'file-dir-conflict', 'a'],
  ['a directory, then a file of the same name', tarGz(dir('a/'), file('a')), 'file-dir-conflict', 'a'],
  ['a file, then a directory of the same name', tarGz(file('a'), dir('a/')), 'file-dir-conflict', 'a/'],
  [
    'a directory entry with data',
    tarGz(entry({ name: 'd/', type: '5', size: 512 }, Buffer.alloc(512, 0x41))),
    'directory-with-data',
    'd/',
  ],
  ['a file named "."', tarGz(file('.')), 'empty-name', '.'],
];

const validTar = Buffer.concat([file('a.txt', 'a'.repeat(3000)), file('b.txt', 'b'.repeat(3000)), END]);
const validTarGz = gzipSync(validTar);
const broken: [string, Buffer, string][] = [
  ['gzip cut in the middle', validTarGz.subarray(0, Math.floor(validTarGz.length / 2)), 'truncated'],
  ['gzip without its trailer', validTarGz.subarray(0, validTarGz.length - 8), 'truncated'],
  ['tar cut inside an entry, then gzipped', gzipSync(validTar.subarray(0, 2000)), 'truncated'],
  [
    'tar cut between two entries, so without its end-of-archive marker',
    gzipSync(validTar.subarray(0, 512 + 3072)),
    'truncated',
  ],
  ['an empty input', Buffer.alloc(0), 'truncated'],
  ['bytes that are not gzip', Buffer.from('this is not a gzip stream at all, just text'), 'malformed'],
  [
    'a header with a bad checksum',
    tarGz(Buffer.concat([entry({ name: 'a.txt', badChecksum: true }, 'x')])),
    'malformed',
  ],
  ['a pax size that is not a number', tarGz(pax('x', [['size', 'many']]), file('a.txt')), 'malformed'],
];

describe('extractTarGz: refused archives leave nothing behind', () => {
  it.each(hostile)('refuses %s', async (_label, archive, reason, name) => {
    const { error, left } = await extractExpectingError(archive);
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ code: 'UNSAFE_ARCHIVE', reason, entry: name });
    if (name !== undefined) expect((error as Error).message).toContain(JSON.stringify(name));
    expect(left).toEqual([]); // neither `out` nor its staging folder
  });

  it.each(broken)('refuses %s', async (_label, archive, reason) => {
    const { error, left } = await extractExpectingError(archive);
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ code: 'UNSAFE_ARCHIVE', reason });
    expect(left).toEqual([]);
  });

  it('refuses a select() that maps an entry outside, naming the entry', async () => {
    const { error, left } = await extractExpectingError(tarGz(file('a.txt')), { ...limits, select: () => '../a.txt' });
    expect(error).toMatchObject({ reason: 'dot-dot', entry: 'a.txt' });
    expect(left).toEqual([]);
  });
});

describe('extractTarGz: limits, counted while streaming', () => {
  const files = (count: number, size: number) =>
    tarGz(...Array.from({ length: count }, (_, i) => file(`f${i}.bin`, 'z'.repeat(size))));

  it('refuses more files than maxFiles', async () => {
    const { error, left } = await extractExpectingError(files(3, 10), { maxBytes: 1 << 20, maxFiles: 2 });
    expect(error).toMatchObject({ reason: 'too-many-files', entry: 'f2.bin' });
    expect(left).toEqual([]);
  });

  it('accepts exactly maxFiles files', async () => {
    const dest = join(await tempDir(), 'out');
    expect((await extractTarGz(files(2, 10), dest, { maxBytes: 1 << 20, maxFiles: 2 })).files).toEqual([
      'f0.bin',
      'f1.bin',
    ]);
  });

  it('refuses an archive whose entries add up past maxBytes', async () => {
    // 19,456 bytes uncompressed: zlib's first chunk already crosses the limit.
    const { error, left } = await extractExpectingError(files(4, 4096), { maxBytes: 10_000, maxFiles: 100 });
    expect(error).toMatchObject({ reason: 'too-large' });
    expect(left).toEqual([]);
  });

  it('refuses one file over maxEntryBytes', async () => {
    const { error } = await extractExpectingError(files(2, 4096), {
      maxBytes: 1 << 20,
      maxFiles: 100,
      maxEntryBytes: 4095,
    });
    expect(error).toMatchObject({ reason: 'entry-too-large', entry: 'f0.bin' });
  });

  it('refuses a declared 1 GiB file at its header, before inflating it', async () => {
    const bomb = zeroBomb(entry({ name: 'huge.bin', size: 1 << 30 }).subarray(0, 512), 1024);
    const started = performance.now();
    const { error, left } = await extractExpectingError(bomb, { maxBytes: 10 << 20, maxFiles: 100 });
    expect(error).toMatchObject({ reason: 'too-large', entry: 'huge.bin' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(left).toEqual([]);
  });

  it('stops inflating a gzip bomb (1 GiB of zeros in 1 MiB) at maxBytes, with bounded memory', async () => {
    const bomb = zeroBomb(Buffer.alloc(0), 1024);
    expect(bomb.length).toBeLessThan(2 << 20);
    // The kernel's high-water mark of this process from here: every spike counts, not only
    // those a timer happens to sample.
    resetResidentPeak();
    const before = residentPeak();
    const started = performance.now();
    const { error, left } = await extractExpectingError(bomb, { maxBytes: 10 << 20, maxFiles: 100 });
    expect(error).toMatchObject({ reason: 'too-large', entry: undefined });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(residentPeak() - before).toBeLessThan(64 << 20);
    expect(left).toEqual([]);
  });

  it('stops many small entries of zeros adding up past maxBytes', async () => {
    const many = Buffer.concat(Array.from({ length: 64 }, (_, i) => entry({ name: `z${i}` }, Buffer.alloc(1 << 20))));
    const { error } = await extractExpectingError(gzipSync(Buffer.concat([many, END])), {
      maxBytes: 10 << 20,
      maxFiles: 1000,
    });
    expect(error).toMatchObject({ reason: 'too-large', entry: 'z9' });
  });

  it.each([
    ['maxBytes', { maxBytes: -1, maxFiles: 1 }],
    ['maxFiles', { maxBytes: 1, maxFiles: Number.NaN }],
    ['maxEntryBytes', { maxBytes: 1, maxFiles: 1, maxEntryBytes: 1.5 }],
  ])('refuses a nonsensical %s before reading anything', async (_name, options) => {
    const { error, left } = await extractExpectingError(tarGz(file('a')), options as ExtractOptions);
    expect(error).toBeInstanceOf(RangeError);
    expect(left).toEqual([]);
  });
});

describe('extractTarGz: what it writes', () => {
  it('writes only regular files and folders: files 0644, or 0755 when any execute bit was set, folders 0755, whatever the umask', async () => {
    const archive = tarGz(
      file('plain.txt', 'p', 0o600),
      file('tool.sh', 't', 0o700),
      file('setuid', 's', 0o4711),
      file('sticky/other-exec', 'o', 0o1001),
      entry({ name: 'locked/', type: '5', mode: 0o000 }),
      file('locked/inside.txt', 'i', 0o644),
    );
    const dest = join(await tempDir(), 'out');
    const previous = process.umask(0o077);
    try {
      await extractTarGz(archive, dest, limits);
    } finally {
      process.umask(previous);
    }
    expect((await stat(dest)).mode & 0o7777).toBe(0o755);
    expect(await listTree(dest)).toEqual([
      ['locked', 'dir', 0o755],
      ['locked/inside.txt', 'i', 0o644],
      ['plain.txt', 'p', 0o644],
      ['setuid', 's', 0o755],
      ['sticky', 'dir', 0o755],
      ['sticky/other-exec', 'o', 0o755],
      ['tool.sh', 't', 0o755],
    ]);
  });

  it('returns the files sorted by the bytes of their paths, and their total size', async () => {
    const dest = join(await tempDir(), 'out');
    const result = await extractTarGz(
      tarGz(file('b/z', '12'), file('a', '3'), file('B', '456'), file('é', '7')),
      dest,
      limits,
    );
    expect(result).toEqual({ files: ['B', 'a', 'b/z', 'é'], bytes: 7 });
  });

  it('extracts a writeBundle bundle exactly, from a stream', async () => {
    const parent = await tempDir();
    const bundle = await writeBundle([
      { path: 'run.sh', data: Buffer.from('#!/bin/sh\n'), executable: true },
      { path: 'src/big.bin', data: Buffer.alloc(3 << 20, 7) }, // streamed to disk, not buffered
      { path: 'src/small.txt', data: Buffer.from('small') },
    ]);
    await writeFile(join(parent, 'bundle.tgz'), bundle);
    const dest = join(parent, 'out');
    const result = await extractTarGz(createReadStream(join(parent, 'bundle.tgz')), dest, {
      maxBytes: 8 << 20,
      maxFiles: 10,
    });
    expect(result).toEqual({ files: ['run.sh', 'src/big.bin', 'src/small.txt'], bytes: 10 + (3 << 20) + 5 });
    expect((await readFile(join(dest, 'src/big.bin'))).equals(Buffer.alloc(3 << 20, 7))).toBe(true);
    expect((await stat(join(dest, 'run.sh'))).mode & 0o777).toBe(0o755);
  });

  it('extracts an archive made by GNU tar (names under "./")', async () => {
    const parent = await tempDir();
    const tree = join(parent, 'tree');
    await mkdir(join(tree, 'sub/deeper'), { recursive: true });
    await writeFile(join(tree, 'sub/deeper/a.txt'), 'a');
    await writeFile(join(tree, 'top.sh'), 'top', { mode: 0o755 });
    await run('tar', ['-czf', join(parent, 'gnu.tgz'), '-C', tree, '.']);
    const dest = join(parent, 'out');
    const result = await extractTarGz(await readFile(join(parent, 'gnu.tgz')), dest, limits);
    expect(result.files).toEqual(['sub/deeper/a.txt', 'top.sh']);
    expect(await listTree(dest)).toEqual([
      ['sub', 'dir', 0o755],
      ['sub/deeper', 'dir', 0o755],
      ['sub/deeper/a.txt', 'a', 0o644],
      ['top.sh', 'top', 0o755],
    ]);
  });

  it('narrows a GitHub-shaped tarball to one folder, remapped, ignoring a symlink outside it', async () => {
    // What GET /repos/{o}/{r}/tarball/{sha} returns: a pax global header with the commit
    // (from git archive), every entry under "owner-repo-sha/".
    const top = 'acme-tools-0123abc';
    const archive = tarGz(
      pax('g', [['comment', '0123abc0123abc0123abc0123abc0123abc0123a']]),
      dir(`${top}/`),
      file(`${top}/README.md`, 'readme'),
      dir(`${top}/packages/`),
      dir(`${top}/packages/tool/`),
      file(`${top}/packages/tool/index.js`, 'index', 0o644),
      file(`${top}/packages/tool/bin/run`, 'run', 0o755),
      file(`${top}/packages/toolbox/not-me.js`, 'no'),
      entry({ name: `${top}/packages/latest`, type: '2', linkname: 'tool' }),
    );
    const select = selectFolder('packages/tool', 'vendor/tool');
    const dest = join(await tempDir(), 'out');
    const result = await extractTarGz(archive, dest, { ...limits, stripComponents: 1, select });
    expect(result.files).toEqual(['vendor/tool/bin/run', 'vendor/tool/index.js']);
    expect(await listTree(dest)).toEqual([
      ['vendor', 'dir', 0o755],
      ['vendor/tool', 'dir', 0o755],
      ['vendor/tool/bin', 'dir', 0o755],
      ['vendor/tool/bin/run', 'run', 0o755],
      ['vendor/tool/index.js', 'index', 0o644],
    ]);
    const inMemory = await readBundleEntries(archive, {
      ...limits,
      stripComponents: 1,
      select: selectFolder('packages/tool'),
    });
    expect(inMemory.map((e) => [e.path, e.data.toString(), e.executable])).toEqual([
      ['bin/run', 'run', true],
      ['index.js', 'index', false],
    ]);
  });

  it('still refuses a link inside the selected folder', async () => {
    const archive = tarGz(file('keep/a.txt'), entry({ name: 'keep/link', type: '2', linkname: 'a.txt' }));
    const { error, left } = await extractExpectingError(archive, { ...limits, select: selectFolder('keep') });
    expect(error).toMatchObject({ reason: 'link', entry: 'keep/link' });
    expect(left).toEqual([]);
  });

  it('skips entries that strip to nothing, like tar --strip-components', async () => {
    const dest = join(await tempDir(), 'out');
    const result = await extractTarGz(tarGz(file('top-level-file'), file('a/b/c.txt', 'c')), dest, {
      ...limits,
      stripComponents: 2,
    });
    expect(result.files).toEqual(['c.txt']);
  });

  it('refuses an existing destination and leaves it untouched', async () => {
    const parent = await tempDir();
    const dest = join(parent, 'out');
    await mkdir(dest);
    await writeFile(join(dest, 'mine.txt'), 'mine');
    const error = await extractTarGz(tarGz(file('a.txt')), dest, limits).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExtractIOError);
    expect(error).toMatchObject({ code: 'AIP26_EXTRACT_IO', errno: 'EEXIST', path: dest });
    expect(await readdir(parent)).toEqual(['out']);
    expect(await readdir(dest)).toEqual(['mine.txt']);
  });

  it('fails with ExtractIOError when the destination folder has no parent', async () => {
    const dest = join(await tempDir(), 'missing', 'out');
    await expect(extractTarGz(tarGz(file('a.txt')), dest, limits)).rejects.toMatchObject({
      code: 'AIP26_EXTRACT_IO',
      errno: 'ENOENT',
    });
  });

  it('passes an error of the source stream through, leaving nothing', async () => {
    const parent = await tempDir();
    const { Readable } = await import('node:stream');
    const failing = new Readable({
      read() {
        this.destroy(new Error('connection reset'));
      },
    });
    await expect(extractTarGz(failing, join(parent, 'out'), limits)).rejects.toThrow('connection reset');
    expect(await readdir(parent)).toEqual([]);
  });
});

describe('readTarGz: the same rules, in memory', () => {
  it('reads every regular file, sorted by path bytes, folders dropped', async () => {
    const files = await readTarGz(tarGz(dir('d/'), file('d/z.txt', 'z'), file('a.txt', 'a'), file('B', 'b')), limits);
    expect([...files].map(([path, data]) => [path, data.toString()])).toEqual([
      ['B', 'b'],
      ['a.txt', 'a'],
      ['d/z.txt', 'z'],
    ]);
  });

  it.each(hostile)('refuses %s', async (_label, archive, reason, name) => {
    await expect(readTarGz(archive, limits)).rejects.toMatchObject({ code: 'UNSAFE_ARCHIVE', reason, entry: name });
  });

  it.each(broken)('refuses %s', async (_label, archive, reason) => {
    await expect(readTarGz(archive, limits)).rejects.toMatchObject({ code: 'UNSAFE_ARCHIVE', reason });
  });

  it('accepts a pax global header holding only a comment', async () => {
    const files = await readTarGz(tarGz(pax('g', [['comment', 'made by git archive']]), file('a.txt', 'a')), limits);
    expect([...files.keys()]).toEqual(['a.txt']);
  });
});
