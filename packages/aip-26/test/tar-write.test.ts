import { execFile, spawn } from 'node:child_process';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BundleEntryError,
  bundlePathProblem,
  bundleStream,
  writeBundle,
  type InMemoryEntry as BundleEntry,
} from '../src/tar/index.js';
import { listHeaders, listNames, paxRecords } from './fixtures/tar/craft.js';
import { sampleEntries, sha256, shuffled } from './fixtures/tar/sample-bundle.js';
import { tempDir } from './fixtures/tar/temp.js';

const run = promisify(execFile);
const file = (path: string, text = path, executable = false): BundleEntry => ({
  path,
  data: Buffer.from(text),
  executable,
});

async function tarNames(entries: BundleEntry[]): Promise<string[]> {
  return listNames(gunzipSync(await writeBundle(entries))).map((e) => e.name);
}

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('writeBundle: layout', () => {
  it('sorts entries of one folder by the UTF-8 bytes of their names, whatever the input order', async () => {
    // JavaScript's default sort compares UTF-16 units and would put the emoji (a surrogate
    // pair, 0xD83D...) before U+FF61; in UTF-8 bytes U+FF61 (EF BD A1) comes first.
    const names = ['\u{1F600}', '\uFF61', 'b', 'B', 'a-b', 'a.txt', 'é'];
    expect(
      await tarNames(
        shuffled(
          names.map((n) => file(n)),
          7,
        ),
      ),
    ).toEqual(['B', 'a-b', 'a.txt', 'b', 'é', '\uFF61', '\u{1F600}']);
  });

  it('writes a 0755 directory entry for every parent folder, right before its subtree', async () => {
    // GNU tar --sort=name order: a folder and its subtree before the names that extend the
    // folder's name with a byte below "/" ("a-z.txt", "b.txt").
    const entries = [file('a/b/c.txt'), file('a/b.txt'), file('a-z.txt'), file('z/y/x/w.txt'), file('a/b/d/e.txt')];
    expect(await tarNames(entries)).toEqual([
      'a/',
      'a/b/',
      'a/b/c.txt',
      'a/b/d/',
      'a/b/d/e.txt',
      'a/b.txt',
      'a-z.txt',
      'z/',
      'z/y/',
      'z/y/x/',
      'z/y/x/w.txt',
    ]);
    const headers = listHeaders(gunzipSync(await writeBundle(entries)));
    for (const h of headers.filter((x) => x.name.endsWith('/')))
      expect([h.type, h.mode, h.size]).toEqual(['5', 0o755, 0]);
  });

  it('pins every header field that could vary: mtime 0, uid and gid 0, empty owner names, ustar magic, modes 0644 and 0755', async () => {
    const headers = listHeaders(
      gunzipSync(await writeBundle([file('run.sh', '#!/bin/sh\n', true), file('lib/a.js'), file('b.txt')])),
    );
    expect(headers.map((h) => [h.name, h.type, h.mode.toString(8)])).toEqual([
      ['b.txt', '0', '644'],
      ['lib/', '5', '755'],
      ['lib/a.js', '0', '644'],
      ['run.sh', '0', '755'],
    ]);
    for (const h of headers) {
      expect({ mtime: h.mtime, uid: h.uid, gid: h.gid, uname: h.uname, gname: h.gname, magic: h.magic }).toEqual({
        mtime: 0,
        uid: 0,
        gid: 0,
        uname: '',
        gname: '',
        magic: 'ustar\u000000',
      });
    }
  });

  const longSegment = 'n'.repeat(101);
  const splittable = `${'p'.repeat(150)}/${'q'.repeat(100)}`; // 251 bytes: prefix 150 + name 100
  const cases: [string, string, boolean][] = [
    ['a name of exactly 100 bytes', 'm'.repeat(100), false],
    ['a longer name that splits into ustar prefix and name', splittable, false],
    ['a single segment over 100 bytes', longSegment, true],
    ['a name over the 255 bytes the split can hold', `${'p'.repeat(156)}/${'q'.repeat(100)}`, true],
    ['a non-ASCII name (pax path is UTF-8 by definition)', 'données/été.txt', true],
  ];
  it.each(cases)('%s: pax header %s', async (_label, path, wantPax) => {
    const tar = gunzipSync(await writeBundle([file(path)]));
    const fileEntry = listNames(tar).at(-1)!;
    expect(fileEntry).toEqual({ name: path, type: '0', viaPax: wantPax });
    const headers = listHeaders(tar);
    expect(headers.some((h) => h.type === 'g')).toBe(false);
    // The pax header holds the path record and nothing else (no times that would vary).
    for (const h of headers.filter((x) => x.type === 'x')) expect(h.paxText).toMatch(/^\d+ path=[^\n]*\n$/);
    if (wantPax) expect(headers.at(-2)!.paxText).toBe(paxRecords([['path', path]]).toString());
  });

  it('writes an archive with no entries for an empty bundle', async () => {
    const tar = gunzipSync(await writeBundle([]));
    expect(tar).toEqual(Buffer.alloc(1024));
  });
});

describe('writeBundle: gzip', () => {
  it('writes a gzip header that does not vary by platform: no name, mtime 0, OS byte 3', async () => {
    const header = (bundle: Buffer) => [...bundle.subarray(0, 10)];
    const entries = sampleEntries();
    // XFL (byte 8) follows the level: 2 for 9, 4 for 1, 0 otherwise; the same everywhere.
    expect(header(await writeBundle(entries))).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
    expect(header(await writeBundle(entries, { level: 9 }))).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
    expect(header(await writeBundle(entries, { level: 1 }))).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3]);
  });

  it('compresses at level 6 unless told otherwise; the level changes the bytes, not the tar', async () => {
    const entries = sampleEntries();
    const byDefault = await writeBundle(entries);
    expect(sha256(await writeBundle(entries, { level: 6 }))).toBe(sha256(byDefault));
    const fast = await writeBundle(entries, { level: 1 });
    expect(sha256(fast)).not.toBe(sha256(byDefault));
    expect(sha256(gunzipSync(fast))).toBe(sha256(gunzipSync(byDefault)));
  });

  it.each([-1, 10, 2.5, Number.NaN])('refuses gzip level %s', async (level) => {
    await expect(writeBundle([], { level })).rejects.toBeInstanceOf(RangeError);
  });
});

describe('writeBundle: determinism', () => {
  it('gives the same bytes for any order of the same entries', async () => {
    const entries = sampleEntries();
    const reference = sha256(await writeBundle(entries));
    for (const seed of [1, 2, 3, 4, 5]) expect(sha256(await writeBundle(shuffled(entries, seed)))).toBe(reference);
  });

  it('gives the same bytes in separate processes', async () => {
    const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
    const script = fileURLToPath(new URL('./fixtures/tar/print-sample-digest.ts', import.meta.url));
    const digestInChild = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--conditions=@agentproto/source', '--import', 'tsx', script], {
          cwd: repoRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk));
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve(out.trim()) : reject(new Error(`child exited ${code}: ${err}`)),
        );
      });
    const [first, second] = await Promise.all([digestInChild(), digestInChild()]);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(second).toBe(first);
    expect(sha256(await writeBundle(sampleEntries()))).toBe(first);
  });

  it('stops packing, without an error, when the reader of bundleStream stops early', async () => {
    const big = Array.from({ length: 8 }, (_, i) => ({ path: `f${i}.bin`, data: Buffer.alloc(2 << 20, i) }));
    const stream = bundleStream(big);
    for await (const _chunk of stream) break; // destroys the stream after the first chunk
    expect(stream.destroyed).toBe(true);
    // Still usable afterwards: nothing was left half-open.
    expect((await writeBundle(big.slice(0, 1))).length).toBeGreaterThan(0);
  });

  it('streams the same bytes as it returns, from an async iterable too', async () => {
    const entries = sampleEntries();
    async function* slowly() {
      for (const entry of entries) {
        await new Promise((resolve) => setImmediate(resolve));
        yield entry;
      }
    }
    const reference = sha256(await writeBundle(entries));
    expect(sha256(await collect(bundleStream(entries)))).toBe(reference);
    expect(sha256(await writeBundle(slowly()))).toBe(reference);
    expect(sha256(await collect(bundleStream(slowly())))).toBe(reference);
  });
});

describe('writeBundle: GNU tar reads it', () => {
  const entries = (): BundleEntry[] => [
    ...sampleEntries(),
    // Larger than the 1 MiB batches: written to zlib without a copy.
    { path: 'big/three-mib.bin', data: Buffer.alloc(3 << 20, 0x5a) },
    { path: 'bin/tool', data: Buffer.from('#!/bin/sh\n'), executable: true },
  ];

  it('extracts to exactly the given files, with mode 0644 or 0755, and 0755 folders', async () => {
    const dir = await tempDir();
    const bundlePath = join(dir, 'bundle.tar.gz');
    await writeFile(bundlePath, await writeBundle(entries()));
    const out = join(dir, 'out');
    await mkdir(out);
    await run('tar', ['-xpzf', bundlePath, '-C', out]);

    const found = new Map<string, { sha: string; mode: number }>();
    const folders: [string, number][] = [];
    const walk = async (rel: string) => {
      for (const dirent of await readdir(join(out, rel), { withFileTypes: true })) {
        const path = rel ? `${rel}/${dirent.name}` : dirent.name;
        const mode = (await stat(join(out, path))).mode & 0o7777;
        if (dirent.isDirectory()) {
          folders.push([path, mode]);
          await walk(path);
        } else {
          expect(dirent.isFile()).toBe(true);
          found.set(path, { sha: sha256(await readFile(join(out, path))), mode });
        }
      }
    };
    await walk('');
    const expected = new Map(
      entries().map((e) => [e.path, { sha: sha256(e.data), mode: e.executable ? 0o755 : 0o644 }]),
    );
    expect(new Map([...found].sort())).toEqual(new Map([...expected].sort()));
    expect(folders.length).toBeGreaterThan(0);
    for (const [, mode] of folders) expect(mode).toBe(0o755);
  });

  it('lists owner 0/0 and the epoch for every entry', async () => {
    const dir = await tempDir();
    const bundlePath = join(dir, 'bundle.tar.gz');
    await writeFile(bundlePath, await writeBundle(entries()));
    const { stdout } = await run('tar', ['--numeric-owner', '--utc', '-tvzf', bundlePath], {
      env: { ...process.env, TZ: 'UTC', LC_ALL: 'C' },
    });
    const lines = stdout.trim().split('\n');
    expect(lines.length).toBe(
      listHeaders(gunzipSync(await writeBundle(entries()))).filter((h) => h.type !== 'x').length,
    );
    for (const line of lines) expect(line).toMatch(/^[-d]rw[-x]r-[-x]r-[-x] 0\/0 +\d+ 1970-01-01 00:00 /);
  });
});

describe('writeBundle: refused input', () => {
  it('refuses a path given twice', async () => {
    const error = await thrown(writeBundle([file('a/b.txt', 'one'), file('c'), file('a/b.txt', 'two')]));
    expect(error).toBeInstanceOf(BundleEntryError);
    expect(error).toMatchObject({
      code: 'AIP26_BUNDLE_ENTRY',
      reason: 'duplicate-path',
      path: 'a/b.txt',
      other: 'a/b.txt',
    });
  });

  it('refuses a path that is a file and also a folder of another file, naming both', async () => {
    const error = (await thrown(writeBundle([file('lib/x/y.js'), file('lib')]))) as BundleEntryError;
    expect(error).toMatchObject({
      code: 'AIP26_BUNDLE_ENTRY',
      reason: 'file-is-parent',
      path: 'lib',
      other: 'lib/x/y.js',
    });
    expect(error.message).toContain('"lib"');
    expect(error.message).toContain('"lib/x/y.js"');
  });

  it('reports the same refusal for any order of the same entries', async () => {
    const entries = [file('a'), file('a/x'), file('b'), file('b/y'), file('c'), file('c')];
    const messages = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6])
      messages.add(((await thrown(writeBundle(shuffled(entries, seed)))) as Error).message);
    expect(messages.size).toBe(1);
  });

  const invalid: [string, string][] = [
    ['an empty path', ''],
    ['an absolute path', '/etc/passwd'],
    ['a trailing slash', 'dir/'],
    ['a double slash', 'a//b'],
    ['a "." segment', './a'],
    ['a ".." segment', 'a/../b'],
    ['a backslash', 'a\\b'],
    ['a drive letter', 'C:x'],
    ['NUL', 'a\0b'],
    ['a name not in NFC (e + combining acute)', 'cafe\u0301'],
    ['a lone surrogate', 'a\uD800b'],
  ];
  it.each(invalid)('refuses %s', async (_label, path) => {
    const error = await thrown(writeBundle([file(path)]));
    expect(error).toBeInstanceOf(BundleEntryError);
    expect(error).toMatchObject({ reason: 'invalid-path', path });
    expect((error as Error).message).toContain(JSON.stringify(path));
  });

  it('takes a printable ASCII path through its fast path to the verdict of every check', () => {
    // The checks in full, each on every path: the model the fast path must agree with.
    const model = (path: string): boolean =>
      path !== '' &&
      !path.includes('\0') &&
      !path.includes('\\') &&
      !path.startsWith('/') &&
      !/^[A-Za-z]:/.test(path) &&
      !/[\uD800-\uDFFF]/u.test(path) &&
      path.normalize('NFC') === path &&
      path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
    const pieces = fc.constantFrom('a', 'B', '/', '.', '..', '\\', ':', '\0', '\u0301', 'é', '\uD800', ' ', '~', 'C:');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.array(pieces).map((p) => p.join('')),
        ),
        (path) => {
          expect(bundlePathProblem(path) === undefined).toBe(model(path));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('reports refused input as the stream error of bundleStream', async () => {
    await expect(collect(bundleStream([file('x'), file('x')]))).rejects.toMatchObject({ reason: 'duplicate-path' });
  });
});
