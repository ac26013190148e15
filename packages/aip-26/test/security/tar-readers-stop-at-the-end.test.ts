import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { constants, createGunzip, gzipSync } from 'node:zlib';
import { ArchiveError, readArchive } from '@agentproto/archive';
import { describe, expect, it } from 'vitest';
import { extractTarGz, readTarGz, type ExtractOptions } from '../../src/tar/index.js';
import { END, entry } from '../fixtures/tar/craft.js';
import { tempDir } from '../fixtures/tar/temp.js';

const run = promisify(execFile);
const limits: ExtractOptions = { maxBytes: 1 << 20, maxFiles: 100 };
const file = (name: string, data = 'x') => entry({ name }, data);

/** What extractTarGz wrote (or the error it threw) and what the parent folder holds after. */
async function extract(
  archive: Buffer | Readable,
  options: ExtractOptions = limits,
): Promise<{ error?: unknown; files?: string[]; left: string[] }> {
  const parent = await tempDir();
  try {
    const result = await extractTarGz(archive, join(parent, 'out'), options);
    return { files: result.files, left: await readdir(parent) };
  } catch (error) {
    return { error, left: await readdir(parent) };
  }
}

/** Every path readArchive hands to its visitor, or the error it stops with. */
async function visited(archive: Buffer | Readable, uncompressed = false): Promise<{ seen: string[]; error?: unknown }> {
  const seen: string[] = [];
  try {
    await readArchive(
      archive,
      { ...limits, uncompressed },
      {
        async directory(path) {
          seen.push(`${path}/`);
        },
        async file(f, body) {
          for await (const _ of body) {
            // drained
          }
          seen.push(f.path);
        },
      },
    );
    return { seen };
  } catch (error) {
    return { seen, error };
  }
}

/** A readable that hands on exactly these chunks, one by one. */
const chunks = (...parts: Buffer[]) => Readable.from(parts, { objectMode: false });

describe('tar readers stop at the end-of-archive marker', () => {
  const hidden = Buffer.concat([file('seen.txt', 'a'), END, file('hidden.sh', '#!/bin/sh\nrm -rf ~\n'), END]);

  it('refuses an entry after the end-of-archive marker, before any reader hands it on', async () => {
    const { seen, error } = await visited(gzipSync(hidden));
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ reason: 'trailing-data', entry: 'hidden.sh' });
    expect(seen).toEqual(['seen.txt']);
    const extracted = await extract(gzipSync(hidden));
    expect(extracted.error).toMatchObject({ reason: 'trailing-data' });
    expect(extracted.left).toEqual([]);
    await expect(readTarGz(gzipSync(hidden), limits)).rejects.toMatchObject({ reason: 'trailing-data' });
  });

  it('refuses an entry after the marker in a plain (uncompressed) tar too', async () => {
    expect(await visited(hidden, true)).toMatchObject({ seen: ['seen.txt'], error: { reason: 'trailing-data' } });
  });

  it('refuses entries hidden after the marker behind GNU-style zero padding', async () => {
    const padded = Buffer.concat([file('seen.txt'), END, Buffer.alloc(8192), file('hidden.txt'), END]);
    expect(await visited(gzipSync(padded))).toMatchObject({
      seen: ['seen.txt'],
      error: { reason: 'trailing-data', entry: 'hidden.txt' },
    });
  });

  it.each([
    ['a few bytes', Buffer.from('junk')],
    ['a whole block of text', Buffer.alloc(512, 'A')],
    ['one byte late in the padding', Buffer.concat([Buffer.alloc(9000), Buffer.from([1]), Buffer.alloc(239)])],
    [
      'a block tar-stream reads as empty: only its checksum field set',
      (() => {
        const b = Buffer.alloc(512);
        b.write('0000400\0', 148, 'ascii');
        return b;
      })(),
    ],
  ])('refuses %s after the marker', async (_what, tail) => {
    const tar = Buffer.concat([file('seen.txt'), END, tail]);
    const { seen, error } = await visited(gzipSync(tar));
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error).toMatchObject({ reason: 'trailing-data' });
    expect(seen).toEqual(['seen.txt']);
  });

  it('accepts zero padding after the marker, up to GNU tar record size and beyond', async () => {
    for (const pad of [0, 512, 10240 - 1024 - 1024, 65536]) {
      const tar = Buffer.concat([file('a.txt'), END, Buffer.alloc(pad)]);
      expect(await visited(gzipSync(tar))).toEqual({ seen: ['a.txt'] });
    }
  });

  it('still refuses a tar without its marker (cut between two entries)', async () => {
    expect((await visited(gzipSync(file('a.txt')))).error).toMatchObject({ reason: 'truncated' });
    expect((await visited(gzipSync(Buffer.concat([file('a.txt'), Buffer.alloc(512)])))).error).toMatchObject({
      reason: 'truncated',
    });
  });
});

describe('tar readers read one gzip member and nothing after it', () => {
  const first = Buffer.concat([file('seen.txt', 'a'), END]);
  const second = Buffer.concat([file('hidden.sh', '#!/bin/sh\n'), END]);

  it("Node's own gunzip would hand on both members (what the readers must not do)", async () => {
    const out: Buffer[] = [];
    for await (const chunk of Readable.from([Buffer.concat([gzipSync(first), gzipSync(second)])]).pipe(createGunzip()))
      out.push(chunk as Buffer);
    expect(Buffer.concat(out)).toEqual(Buffer.concat([first, second]));
  });

  it('refuses a second gzip member before any entry of it is handed on', async () => {
    const archive = Buffer.concat([gzipSync(first), gzipSync(second)]);
    const { seen, error } = await visited(archive);
    expect(error).toMatchObject({ reason: 'gzip-member' });
    expect(seen).not.toContain('hidden.sh');
    const extracted = await extract(archive);
    expect(extracted.error).toMatchObject({ reason: 'gzip-member' });
    expect(extracted.left).toEqual([]);
  });

  it('refuses a second member that starts exactly at a chunk boundary, or arrives byte by byte', async () => {
    expect((await visited(chunks(gzipSync(first), gzipSync(second)))).error).toMatchObject({ reason: 'gzip-member' });
    const bytes = Buffer.concat([gzipSync(first), gzipSync(second)]);
    expect((await visited(chunks(...[...bytes].map((b) => Buffer.from([b]))))).error).toMatchObject({
      reason: 'gzip-member',
    });
  });

  it('refuses a first member that is empty (a reader stopping there sees no archive at all)', async () => {
    expect((await visited(Buffer.concat([gzipSync(Buffer.alloc(0)), gzipSync(first)]))).error).toBeInstanceOf(
      ArchiveError,
    );
  });

  it('refuses an empty member appended after the archive', async () => {
    expect((await visited(Buffer.concat([gzipSync(first), gzipSync(Buffer.alloc(0))]))).error).toMatchObject({
      reason: 'gzip-member',
    });
  });

  it('refuses bytes other than zeros after the gzip trailer, and accepts zeros', async () => {
    expect((await visited(Buffer.concat([gzipSync(first), Buffer.from('junk')]))).error).toMatchObject({
      reason: 'trailing-data',
    });
    expect(await visited(Buffer.concat([gzipSync(first), Buffer.alloc(4096)]))).toEqual({ seen: ['seen.txt'] });
    expect(await visited(chunks(gzipSync(first), Buffer.alloc(10), Buffer.alloc(10)))).toEqual({ seen: ['seen.txt'] });
  });

  it('checks the gzip trailer: a wrong CRC-32 or size, or a missing trailer, is refused', async () => {
    const good = gzipSync(first);
    const badCrc = Buffer.from(good);
    badCrc.writeUInt32LE((badCrc.readUInt32LE(badCrc.length - 8) ^ 1) >>> 0, badCrc.length - 8);
    expect((await visited(badCrc)).error).toMatchObject({ reason: 'malformed' });
    const badSize = Buffer.from(good);
    badSize.writeUInt32LE(badSize.readUInt32LE(badSize.length - 4) + 1, badSize.length - 4);
    expect((await visited(badSize)).error).toMatchObject({ reason: 'malformed' });
    expect((await visited(good.subarray(0, good.length - 8))).error).toMatchObject({ reason: 'truncated' });
    expect((await visited(good.subarray(0, good.length - 20))).error).toMatchObject({ reason: 'truncated' });
    expect((await visited(Buffer.alloc(0))).error).toMatchObject({ reason: 'truncated' });
    expect((await visited(Buffer.from('not gzip at all'))).error).toMatchObject({ reason: 'malformed' });
  });

  it('reads a member split across chunks at every byte, and one flushed in many deflate blocks', async () => {
    const bytes = gzipSync(first);
    expect(await visited(chunks(...[...bytes].map((b) => Buffer.from([b]))))).toEqual({ seen: ['seen.txt'] });
    expect(await visited(gzipSync(first, { finishFlush: constants.Z_FINISH, chunkSize: 64 }))).toEqual({
      seen: ['seen.txt'],
    });
  });
});

describe('real archives still read', () => {
  it('accepts GNU tar output: gzip through tar -z, and gzip -9 of a tar (a header with the file name)', async () => {
    const root = await tempDir();
    const src = join(root, 'src');
    await mkdir(join(src, 'skills', 'a'), { recursive: true });
    await writeFile(join(src, 'skills', 'a', 'SKILL.md'), '# a\n');
    await writeFile(join(src, 'big.bin'), Buffer.alloc(300_000, 7));
    await run('tar', ['-czf', join(root, 'z.tar.gz'), '-C', src, '.']);
    await run('tar', ['-cf', join(root, 'plain.tar'), '-C', src, '.']);
    await run('gzip', ['-9', '-k', join(root, 'plain.tar')]);
    for (const name of ['z.tar.gz', 'plain.tar.gz']) {
      const archive = await readFile(join(root, name));
      const { seen, error } = await visited(archive);
      expect(error).toBeUndefined();
      expect(seen.filter((p) => !p.endsWith('/')).sort()).toEqual(['big.bin', 'skills/a/SKILL.md']);
    }
    // GNU tar pads to its record size with zeros after the marker.
    const plain = await readFile(join(root, 'plain.tar'));
    expect(plain.length % 10240).toBe(0);
    expect(await visited(plain, true)).toMatchObject({ seen: expect.arrayContaining(['big.bin']) });
    expect((await extract(await readFile(join(root, 'z.tar.gz')))).files?.sort()).toEqual([
      'big.bin',
      'skills/a/SKILL.md',
    ]);
  });

  it('accepts git archive output (a pax global header, as GitHub tarballs have)', async () => {
    const repo = await tempDir();
    const git = (...args: string[]) =>
      run('git', ['-C', repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args]);
    await git('init', '-q');
    await writeFile(join(repo, 'README.md'), 'hi\n');
    await git('add', '.');
    await git('commit', '-q', '-m', 'x');
    await git('archive', '--format=tar.gz', '--prefix=repo-abc/', '-o', join(repo, 'out.tar.gz'), 'HEAD');
    expect(await visited(await readFile(join(repo, 'out.tar.gz')))).toEqual({
      seen: ['repo-abc/', 'repo-abc/README.md'],
    });
  });
});
