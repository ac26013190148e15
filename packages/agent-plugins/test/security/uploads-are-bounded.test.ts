import { execFileSync } from 'node:child_process';
import { gzipSync, zipSync } from 'fflate';
import { packTar } from 'modern-tar';
import { resetResidentPeak, residentPeak } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import {
  type PackageTree,
  type PackageUpload,
  readTarGz,
  readUploadedFiles,
  readZip,
  validatePlugin,
} from '../../src/index.js';
import { zipOf } from '../support/archives.js';

// Issue 17: readers for what people upload, "each bounded (bytes, files, path length,
// compression ratio) with typed findings, and the same link, .git and traversal rules as the
// safe tar reader". Every archive here is built the way an attacker would build it.

const text = (value: string) => new TextEncoder().encode(value);
const PLUGIN = text(
  `${JSON.stringify({ $schema: 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json', name: 'acme.tools', version: '1.0.0', description: 'd' })}\n`,
);
const SKILL = text('---\nname: review\ndescription: Reviews a change.\n---\n# review\n');

function refusedWith(upload: PackageUpload, code: string): void {
  expect(upload.refused).toBe(true);
  expect(upload.tree.size).toBe(0);
  expect(upload.findings.map((f) => f.code)).toEqual([code]);
  expect(upload.findings[0]?.severity).toBe('error');
}

async function tarGz(entries: Parameters<typeof packTar>[0]): Promise<Uint8Array> {
  return gzipSync(await packTar(entries));
}

describe('names: what a folder cannot hold refuses the upload', () => {
  it.each([
    ['../evil', 'upload.path-invalid'],
    ['/etc/passwd', 'upload.path-invalid'],
    ['a\\..\\b', 'upload.path-invalid'],
    ['C:/x', 'upload.path-invalid'],
    ['skills/../../x', 'upload.path-invalid'],
  ])('a zip entry %s is %s', (name, code) => {
    refusedWith(readZip(zipSync({ 'plugin.json': PLUGIN, [name]: text('x') })), code);
  });

  it.each(['../evil', '/etc/passwd', 'a/../../b'])('a tar entry %s is refused', async (name) => {
    const upload = await readTarGz(await tarGz([{ header: { name, size: 1, type: 'file' }, body: 'x' }]));
    refusedWith(upload, 'upload.path-invalid');
  });

  it('two zip entries at one path (a and ./a) are refused, whichever comes first', () => {
    refusedWith(readZip(zipSync({ 'plugin.json': PLUGIN, './plugin.json': text('{}') })), 'upload.duplicate');
  });

  it('a tar entry below a file of the same upload is refused', async () => {
    const upload = await readTarGz(
      await tarGz([
        { header: { name: 'docs', size: 1, type: 'file' }, body: 'x' },
        { header: { name: 'docs/a.md', size: 1, type: 'file' }, body: 'y' },
      ]),
    );
    expect(upload.refused).toBe(false);
    const verdict = await validatePlugin(upload);
    expect(verdict.rejected).toBe(true);
    expect(verdict.findings.map((f) => f.code)).toContain('upload.file-dir-conflict');
  });

  it('a name longer than the limit is refused before it is decoded', () => {
    refusedWith(
      readZip(zipSync({ 'plugin.json': PLUGIN, [`${'a/'.repeat(300)}x`]: text('x') }), { maxPathBytes: 512 }),
      'upload.path-too-long',
    );
  });

  it('a tar with more headers than three per allowed entry is refused before any header is parsed', async () => {
    const many = await packTar(
      Array.from({ length: 20 }, (_, i) => ({ header: { name: `docs/${i}.md`, size: 1 }, body: 'x' })),
    );
    // A header with a bad checksum after them: parsed, it would make the upload malformed instead.
    const tar = new Uint8Array([
      ...many.subarray(0, 20 * 1024),
      ...new Uint8Array(512).fill(0x31),
      ...new Uint8Array(1024),
    ]);
    refusedWith(await readTarGz(gzipSync(tar), { maxEntries: 5 }), 'upload.too-many-entries');
    refusedWith(await readTarGz(gzipSync(tar), { maxEntries: 100 }), 'upload.malformed');
  });

  it('more entries than the limit are refused from the central directory, before any is inflated', () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`docs/${i}.md`, text('x')]));
    refusedWith(readZip(zipSync({ 'plugin.json': PLUGIN, ...many }), { maxEntries: 40 }), 'upload.too-many-entries');
  });
});

/** Bytes deflate cannot shrink (xorshift32): their compressed form is over the one-call size. */
function noise(): Uint8Array {
  let x = 2463534242;
  return Uint8Array.from({ length: 1024 * 1024 }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x & 255;
  });
}

describe('bombs: bytes are counted as they inflate', () => {
  const zeros = new Uint8Array(64 * 1024 * 1024);

  it('a zip of 64 MiB of zeros stops at the package limit', () => {
    const bomb = zipSync({ 'plugin.json': PLUGIN, 'docs/zeros.bin': zeros });
    refusedWith(
      readZip(bomb, { maxPackageBytes: 8 * 1024 * 1024, maxFileBytes: 128 * 1024 * 1024 }),
      'upload.too-large',
    );
  });

  it('a zip of 64 MiB of zeros is over the compression ratio under the default limits', () => {
    const bomb = zipSync({ 'plugin.json': PLUGIN, 'docs/zeros.bin': zeros });
    expect(bomb.length).toBeLessThan(200 * 1024);
    refusedWith(readZip(bomb, { maxFileBytes: 128 * 1024 * 1024 }), 'upload.compression-ratio');
  });

  it('a tar.gz of 1 GiB of zeros (1 MiB sent) stops at the package limit, never holding the bomb', async () => {
    const bomb = execFileSync('sh', ['-c', 'head -c 1073741824 /dev/zero | gzip -1'], { maxBuffer: 64 * 1024 * 1024 });
    expect(bomb.length).toBeLessThan(8 * 1024 * 1024);
    // This process's own peak from here (not getrusage's, which counts the pages vitest's
    // main process had when it forked this worker: growth below that would not show).
    resetResidentPeak();
    const peakBefore = residentPeak();
    refusedWith(
      await readTarGz(bomb, { maxPackageBytes: 16 * 1024 * 1024, maxCompressionRatio: 1e9 }),
      'upload.too-large',
    );
    // The peak resident size of this process grew by far less than the bomb's gigabyte.
    expect(residentPeak() - peakBefore).toBeLessThan(256 * 1024 * 1024);
  });

  it.each([
    ['1 MiB of zeros (inflated in one call)', () => new Uint8Array(1024 * 1024)],
    ['1 MiB of noise (inflated as a stream)', noise],
  ])('a zip entry of %s that inflates to more than it declares is refused at its declared size', (_name, content) => {
    const honest = zipSync({ 'plugin.json': PLUGIN, 'docs/a.bin': content() }, { level: 9 });
    // The central directory's uncompressed size of docs/a.bin, forged down to 10 bytes.
    const view = new DataView(honest.buffer, honest.byteOffset, honest.byteLength);
    let at = honest.length - 22;
    while (view.getUint32(at, true) !== 0x06054b50) at -= 1;
    let entry = view.getUint32(at + 16, true);
    while (
      new TextDecoder().decode(honest.subarray(entry + 46, entry + 46 + view.getUint16(entry + 28, true))) !==
      'docs/a.bin'
    )
      entry +=
        46 + view.getUint16(entry + 28, true) + view.getUint16(entry + 30, true) + view.getUint16(entry + 32, true);
    view.setUint32(entry + 24, 10, true);
    const upload = readZip(honest);
    refusedWith(upload, 'upload.malformed');
    expect(upload.findings[0]?.path).toBe('docs/a.bin');
  });

  it('a file over the per-file limit is kept unread: its damaged data is never inflated', async () => {
    const archive = zipSync({
      'plugin.json': PLUGIN,
      'skills/review/SKILL.md': SKILL,
      'docs/big.bin': new Uint8Array(4096).fill(1),
    });
    // Damage docs/big.bin's deflate data: inflating it would refuse the upload as malformed.
    const view = new DataView(archive.buffer);
    let at = 0;
    while (
      !(
        view.getUint32(at, true) === 0x04034b50 &&
        new TextDecoder().decode(archive.subarray(at + 30, at + 30 + view.getUint16(at + 26, true))) === 'docs/big.bin'
      )
    )
      at += 1;
    const data = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
    archive.fill(0xff, data, data + 8);
    const upload = readZip(archive, { maxFileBytes: 1024 });
    expect(upload.refused).toBe(false);
    const verdict = await validatePlugin(upload, { maxFileBytes: 1024 });
    expect(verdict.findings.map((f) => [f.code, f.path])).toEqual([['read.file-too-large', 'docs/big.bin']]);
    expect(verdict.skills).toEqual(['review']);
  });
});

describe('archives that are not what they claim', () => {
  it.each([
    ['random bytes', () => new Uint8Array(300).fill(0x41)],
    ['a zip cut short', () => zipSync({ 'plugin.json': PLUGIN }).subarray(0, 40)],
    ['nothing at all', () => new Uint8Array(0)],
  ])('%s as a zip is upload.malformed', (_name, bytes) => {
    refusedWith(readZip(bytes()), 'upload.malformed');
  });

  it.each([
    ['random bytes', async () => new Uint8Array(300).fill(0x41)],
    [
      'a gzip cut short',
      async () =>
        (await tarGz([{ header: { name: 'plugin.json', size: PLUGIN.length }, body: PLUGIN }])).subarray(0, 30),
    ],
    [
      'two gzip members',
      async () => {
        const one = await tarGz([{ header: { name: 'plugin.json', size: PLUGIN.length }, body: PLUGIN }]);
        return new Uint8Array([...one, ...one]);
      },
    ],
    ['gzip of something not a tar', async () => gzipSync(new Uint8Array(2048).fill(0x41))],
    [
      'an entry hidden after the end-of-archive marker',
      async () => {
        const shown = await packTar([{ header: { name: 'plugin.json', size: PLUGIN.length }, body: PLUGIN }]);
        const hidden = await packTar([{ header: { name: 'mcp.json', size: 2 }, body: '{}' }]);
        return gzipSync(new Uint8Array([...shown, ...hidden]));
      },
    ],
    [
      'a tar without its end-of-archive marker',
      async () => {
        const tar = await packTar([{ header: { name: 'plugin.json', size: PLUGIN.length }, body: PLUGIN }]);
        return gzipSync(tar.subarray(0, 1024));
      },
    ],
  ])('%s as a tar.gz is upload.malformed', async (_name, bytes) => {
    refusedWith(await readTarGz(await bytes()), 'upload.malformed');
  });

  it('an encrypted zip entry and an unknown method are upload.entry-unsupported', () => {
    for (const [offset, value] of [
      [8, 1],
      [10, 12],
    ] as const) {
      const archive = zipSync({ 'plugin.json': PLUGIN });
      const view = new DataView(archive.buffer);
      let at = archive.length - 22;
      while (view.getUint32(at, true) !== 0x06054b50) at -= 1;
      const central = view.getUint32(at + 16, true);
      view.setUint16(central + offset, value, true);
      refusedWith(readZip(archive), 'upload.entry-unsupported');
    }
  });
});

describe('links, hard links and modes', () => {
  it('a tar hard link reads as a copy of the file it names earlier; one to nothing is refused', async () => {
    const good = await readTarGz(
      await tarGz([
        { header: { name: 'plugin.json', size: PLUGIN.length }, body: PLUGIN },
        { header: { name: 'copy.json', size: 0, type: 'link', linkname: 'plugin.json' } },
      ]),
    );
    expect(good.tree.get('copy.json')).toEqual(good.tree.get('plugin.json'));
    const bad = await readTarGz(
      await tarGz([{ header: { name: 'copy.json', size: 0, type: 'link', linkname: 'elsewhere.json' } }]),
    );
    refusedWith(bad, 'upload.hard-link');
  });

  it('GNU tar and a Unix zip keep a script executable and a link a link', async () => {
    const tree = new Map([
      ['plugin.json', { type: 'file' as const, bytes: PLUGIN }],
      ['bin/run', { type: 'file' as const, bytes: text('#!/bin/sh\n'), mode: 0o755 }],
      ['bin/alias', { type: 'symlink' as const, target: 'run' }],
    ]);
    const zipped = readZip(zipOf(tree));
    expect(zipped.tree.get('bin/run')).toMatchObject({ type: 'file', mode: 0o755 });
    expect(zipped.tree.get('bin/alias')).toEqual({ type: 'symlink', target: 'run' });
    const dir = execFileSync('mktemp', ['-d']).toString().trim();
    execFileSync('sh', [
      '-c',
      `mkdir -p ${dir}/bin && printf '#!/bin/sh\\n' > ${dir}/bin/run && chmod 755 ${dir}/bin/run && ln -s run ${dir}/bin/alias`,
    ]);
    const tarred = await readTarGz(execFileSync('tar', ['-C', dir, '-czf', '-', '.']));
    execFileSync('rm', ['-rf', dir]);
    expect(tarred.tree.get('bin/run')).toMatchObject({ type: 'file', mode: 0o755 });
    expect(tarred.tree.get('bin/alias')).toEqual({ type: 'symlink', target: 'run' });
  });
});

describe('files picked in a browser', () => {
  it('drops the picked folder and reads each Blob; a file over the limit is kept unread', async () => {
    const files = [
      new File([PLUGIN], 'plugin.json'),
      new File([SKILL], 'SKILL.md'),
      new File([new Uint8Array(5000)], 'big.bin'),
    ];
    const paths = ['acme.tools/plugin.json', 'acme.tools/skills/review/SKILL.md', 'acme.tools/docs/big.bin'];
    for (const [i, file] of files.entries()) Object.defineProperty(file, 'webkitRelativePath', { value: paths[i] });
    const upload = await readUploadedFiles(files, { maxFileBytes: 4096 });
    expect([...upload.tree.keys()].sort()).toEqual(['docs/big.bin', 'plugin.json', 'skills/review/SKILL.md']);
    const verdict = await validatePlugin(upload, { maxFileBytes: 4096 });
    expect(verdict.skills).toEqual(['review']);
    expect(verdict.findings.map((f) => f.code)).toEqual(['read.file-too-large']);
  });

  it('refuses more bytes than the package limit before reading any', async () => {
    let read = 0;
    const blob = new Blob([new Uint8Array(1024)]);
    const arrayBuffer = async () => {
      read += 1;
      return blob.arrayBuffer();
    };
    const counting = { size: blob.size, arrayBuffer } as unknown as Blob;
    const upload = await readUploadedFiles(
      Array.from({ length: 10 }, (_, i) => ({ path: `docs/${i}.bin`, blob: counting })),
      { maxPackageBytes: 4096 },
    );
    refusedWith(upload, 'upload.too-large');
    expect(read).toBe(0);
  });
});

describe('a package tree from a host', () => {
  it('with an entry of no known shape is rejected with a finding, never a TypeError', async () => {
    for (const bad of [
      { type: 'file', bytes: 'not bytes' },
      { type: 'file', bytes: new Uint16Array(2) },
      { type: 'file', bytes: PLUGIN, mode: -1 },
      { type: 'file', bytes: PLUGIN, size: 1 },
      { type: 'symlink' },
      { type: 'special', kind: 'door' },
      { type: 'elsewhere' },
      null,
    ]) {
      const tree = new Map<string, unknown>([
        ['plugin.json', { type: 'file', bytes: PLUGIN }],
        ['docs/x', bad],
      ]) as unknown as PackageTree;
      const verdict = await validatePlugin(tree);
      expect(verdict.rejected).toBe(true);
      expect(verdict.findings.map((f) => [f.code, f.path])).toEqual([['upload.entry-unsupported', 'docs/x']]);
    }
  });

  it('with a key that is not a string is rejected with upload.path-invalid', async () => {
    const tree = new Map<unknown, unknown>([
      ['plugin.json', { type: 'file', bytes: PLUGIN }],
      [42, { type: 'file', bytes: PLUGIN }],
    ]) as unknown as PackageTree;
    const verdict = await validatePlugin(tree);
    expect(verdict.rejected).toBe(true);
    expect(verdict.findings.map((f) => [f.code, f.path])).toEqual([['upload.path-invalid', '42']]);
  });
});
