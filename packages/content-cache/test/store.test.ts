import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { renameSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  AcquisitionAbortedError,
  type ContentCacheError,
  FillFailedError,
  FillOutsideDestinationError,
  type StoreFs,
  UnsafeTreeError,
  hashTree,
  nodeStoreFs,
  openContentStore,
} from '@agentproto/content-cache';
import { fileHasher } from '../src/file-hasher.js';
import { fileWriter } from '../src/file-writer.js';
import { inMemoryFilesystem } from '../src/store-fs.js';
import { sealTree } from '../src/tree.js';
import { TreeWriter } from '../src/writer.js';
import { storeState, visibleProblems } from './support/inspect.js';
import { tempDir } from './support/temp.js';
import { fillWith, keyFor } from './support/trees.js';

async function newStore(options: Parameters<typeof openContentStore>[0] = {}) {
  const root = join(await tempDir(), 'store');
  return openContentStore({ root, ...options });
}

describe('acquire', () => {
  it('publishes a filled tree and points the declaration link at it', async () => {
    const store = await newStore();
    const tree = await store.acquire(keyFor('c1'), fillWith({ 'SKILL.md': '# a\n', 'scripts/run.sh': 'echo hi\n' }));
    expect(tree.fromCache).toBe(false);
    expect(tree.files).toBe(2);
    expect(tree.bytes).toBe(12);
    expect(tree.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await readFile(join(tree.linkPath, 'scripts/run.sh'), 'utf8')).toBe('echo hi\n');
    expect(await readFile(join(tree.path, 'SKILL.md'), 'utf8')).toBe('# a\n');
    expect(await readlink(tree.linkPath)).toBe(`../objects/${tree.objectId}/content`);
    expect(storeState(store.root).staging).toEqual([]);
    expect(visibleProblems(store.root)).toEqual([]);
  });

  it('serves a hit without running the fill', async () => {
    const store = await newStore();
    const first = await store.acquire(keyFor('c1'), fillWith({ 'SKILL.md': 'x' }));
    const again = await store.acquire(keyFor('c1'), () => Promise.reject(new Error('a hit must not fill')));
    expect(again).toEqual({ ...first, fromCache: true, source: 'store' });
  });

  it('serves a hit from a fresh store instance without walking the tree', async () => {
    const root = join(await tempDir(), 'store');
    const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`d/f${i}.txt`, `${i}`]));
    await (await openContentStore({ root })).acquire(keyFor('c1'), fillWith(files));
    const calls: string[] = [];
    const counting = new Proxy(nodeStoreFs, {
      get:
        (target, name: keyof StoreFs) =>
        (...args: unknown[]) => {
          calls.push(`${String(name)} ${String(args[0])}`);
          return (target[name] as (...a: unknown[]) => unknown)(...args);
        },
    });
    const store = await openContentStore({ root, fs: counting });
    calls.length = 0;
    const hit = await store.acquire(keyFor('c1'), () => Promise.reject(new Error('no fill')));
    expect(hit.fromCache).toBe(true);
    // The marker and the key record: an open, one read and a close each; the link: a readlink.
    expect(calls.length).toBeLessThanOrEqual(7);
    const opened = calls.filter((c) => c.startsWith('openSync')).map((c) => basename(c));
    expect(opened).toHaveLength(2);
    expect(opened).toEqual(expect.arrayContaining(['COMPLETE.json', expect.stringMatching(/^[0-9a-f]{64}\.json$/)]));
    expect(calls.filter((c) => c.includes('/content'))).toEqual([]);
  });

  it('stores two keys with the same content identity as one object, with one link each', async () => {
    const store = await newStore();
    const a = await store.acquire(
      keyFor('tree-1', { source: 'x', path: 'a' }, 'commit-1'),
      fillWith({ 'SKILL.md': 'same' }),
    );
    const b = await store.acquire(keyFor('tree-1', { source: 'x', path: 'a' }, 'commit-2'), () =>
      Promise.reject(new Error('shared content must not fill')),
    );
    expect(b.objectId).toBe(a.objectId);
    expect(b.fromCache).toBe(true);
    const c = await store.acquire(keyFor('tree-1', { source: 'y' }, 'commit-2'), () =>
      Promise.reject(new Error('no fill')),
    );
    expect(c.linkPath).not.toBe(a.linkPath);
    expect(storeState(store.root).objects).toHaveLength(1);
    expect(storeState(store.root).keys).toHaveLength(3);
    expect(storeState(store.root).links).toHaveLength(2);
  });

  it('repoints a declaration link when the declaration resolves to new content', async () => {
    const store = await newStore();
    const declaration = { source: 'x', ref: 'main' };
    const v1 = await store.acquire(keyFor('t1', declaration, 'c1'), fillWith({ 'SKILL.md': 'one' }));
    const v2 = await store.acquire(keyFor('t2', declaration, 'c2'), fillWith({ 'SKILL.md': 'two' }));
    expect(v2.linkPath).toBe(v1.linkPath);
    expect(await readFile(join(v2.linkPath, 'SKILL.md'), 'utf8')).toBe('two');
    // The old tree stays intact for whoever still uses it.
    expect(await readFile(join(v1.path, 'SKILL.md'), 'utf8')).toBe('one');
  });

  it('canonicalises declarations: key order does not make a new key', async () => {
    const store = await newStore();
    const a = await store.acquire(
      keyFor('t', { source: 's', path: 'p', config: { b: 1, a: 2 } }),
      fillWith({ f: 'x' }),
    );
    const b = await store.acquire(keyFor('t', { config: { a: 2, b: 1 }, path: 'p', source: 's' }), () =>
      Promise.reject(new Error('no fill')),
    );
    expect(b.linkPath).toBe(a.linkPath);
    expect(storeState(store.root).keys).toHaveLength(1);
  });

  it('shares one fill among 64 concurrent acquisitions of one key', async () => {
    const store = await newStore();
    let fills = 0;
    const fill = async (destination: string) => {
      fills += 1;
      await new Promise((r) => setTimeout(r, 20));
      await fillWith({ 'SKILL.md': 'x' })(destination, {
        signal: new AbortController().signal,
        writeFile: async () => {},
      });
    };
    const results = await Promise.all(Array.from({ length: 64 }, () => store.acquire(keyFor('one'), fill)));
    expect(fills).toBe(1);
    expect(new Set(results.map((r) => r.objectId)).size).toBe(1);
  });

  it('hashes files written through the fill context exactly as files written any other way', async () => {
    const store = await newStore();
    const viaWriter = await store.acquire(keyFor('w1'), async (_destination, ctx) => {
      await ctx.writeFile('SKILL.md', '# skill\n');
      await ctx.writeFile('bin/run', 'echo\n', { mode: 0o755 });
    });
    const plain = await store.acquire(
      keyFor('w2'),
      fillWith({ 'SKILL.md': '# skill\n', 'bin/run': 'echo\n' }, { 'bin/run': 0o755 }),
    );
    expect(viaWriter.digest).toBe(plain.digest);
    expect((await hashTree(viaWriter.path)).digest).toBe(viaWriter.digest);
  });

  it.each([
    ['on a disk', tmpdir()],
    ['in memory', '/dev/shm'],
  ])(
    'hashes a large fill written %s exactly as a plain fill, whatever the fill did after a write',
    async (_, where) => {
      // About 8 MiB: past the first 4 MiB (hashed inline), on a disk and in memory alike, a
      // file of up to 1 MiB is written and hashed on a writer thread; a larger one is read
      // back and hashed on the worker, and so is a file written again (the writer threads
      // only create files). The first 4 MiB are written as fillWriteFile says, which differs.
      expect(inMemoryFilesystem(where)).toBe(where === '/dev/shm'); // the premise
      const files: Record<string, string> = {};
      for (let i = 0; i < 96; i++) files[`d${i % 4}/f${i}.txt`] = `${i} `.repeat(16_000 + i);
      files['d3/big.txt'] = 'x'.repeat(2 * 1024 * 1024 + 7); // more than the worker reads at once
      files['d3/mid.txt'] = 'y'.repeat(1024 * 1024); // the largest a writer thread takes
      const readBack = vi.spyOn(fileHasher, 'hash');
      const written = vi.spyOn(fileWriter, 'write');
      const root = await mkdtemp(join(where, 'agentproto-cache-'));
      try {
        const store = await openContentStore({ root: join(root, 'store') });
        const viaWriter = await store.acquire(keyFor('big1'), async (destination, ctx) => {
          for (const [path, text] of Object.entries(files)) await ctx.writeFile(path, text);
          // Rewritten through the writer (other and same length), and replaced by a folder:
          // each must hash as what the tree holds.
          await ctx.writeFile('d0/f92.txt', 'short');
          await ctx.writeFile('d0/f92.txt', files['d0/f92.txt']!.replaceAll('9', '8'));
          await rm(join(destination, 'd2/f94.txt'));
          await mkdir(join(destination, 'd2/f94.txt'));
        });
        const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
        // The threads themselves hashed them (sealing would hide a thread that failed by reading them again).
        const call = readBack.mock.calls.findIndex(([abs]) => abs.endsWith('d3/big.txt'));
        expect(await readBack.mock.results[call]!.value).toBe(sha256(files['d3/big.txt']!));
        for (const path of ['d3/mid.txt', 'd1/f93.txt']) {
          const at = written.mock.calls.findIndex(([abs]) => abs.endsWith(path));
          expect(await written.mock.results[at]!.value).toBe(sha256(files[path]!));
        }
        const writes = [
          ...Object.entries(files),
          ['d0/f92.txt', 'short'],
          ['d0/f92.txt', files['d0/f92.txt']!.replaceAll('9', '8')],
        ] as const;
        const pastInline: string[] = [];
        let inline = 0;
        for (const [path, text] of writes) {
          if (inline >= 4 * 1024 * 1024) pastInline.push(path);
          else inline += text.length;
        }
        expect(pastInline).toContain('d2/f94.txt'); // replaced by a folder after it was written
        const tail = (abs: string) => abs.split('/').slice(-2).join('/');
        // Every file past the first 4 MiB went to a writer thread but the one of over 1 MiB;
        // that one, and the two that already existed, were read back.
        expect(written.mock.calls.map(([abs]) => tail(abs))).toEqual(
          pastInline.filter((path) => path !== 'd3/big.txt'),
        );
        expect(readBack.mock.calls.map(([abs]) => tail(abs))).toEqual(['d3/big.txt', 'd0/f92.txt', 'd0/f92.txt']);
        const final: Record<string, string> = {
          ...files,
          'd0/f92.txt': files['d0/f92.txt']!.replaceAll('9', '8'),
        };
        delete final['d2/f94.txt'];
        const plain = await store.acquire(keyFor('big2'), async (destination) => {
          await fillWith(final)(destination, { signal: new AbortController().signal, writeFile: async () => {} });
          await mkdir(join(destination, 'd2/f94.txt'));
        });
        expect(viaWriter.digest).toBe(plain.digest);
        expect((await hashTree(viaWriter.path)).digest).toBe(viaWriter.digest);
        expect(await readFile(join(viaWriter.path, 'd0/f92.txt'), 'utf8')).toBe(final['d0/f92.txt']);
      } finally {
        readBack.mockRestore();
        written.mockRestore();
        await rm(root, { recursive: true, force: true });
      }
    },
  );

  it('hashes a large fill written all at once exactly as a plain fill', async () => {
    // 14 MiB in flight together, in the worker's batches as they come.
    const files: Record<string, string> = {};
    for (let i = 0; i < 96; i++) files[`d${i % 4}/f${i}.txt`] = `${i} `.repeat(48_000 + i);
    const store = await newStore();
    const viaWriter = await store.acquire(keyFor('all1'), (_destination, ctx) =>
      Promise.all(Object.entries(files).map(([path, text]) => ctx.writeFile(path, text))).then(() => undefined),
    );
    const plain = await store.acquire(keyFor('all2'), fillWith(files));
    expect(viaWriter.digest).toBe(plain.digest);
    expect((await hashTree(viaWriter.path)).digest).toBe(viaWriter.digest);
  });

  it('seals while threads still read back, and hashes itself a file a thread could not tell', async () => {
    // Past the first 4 MiB a file of over 1 MiB is created by the main thread and read back
    // on a thread. Here each answer comes late (sealing walks the tree meanwhile), and for a
    // fifth of the files it is "could not tell": sealing must hash those itself, from what
    // they hold by then (the fill changed them after writing, through plain fs, keeping the
    // size).
    const root = await mkdtemp(join('/dev/shm', 'agentproto-cache-'));
    const real = fileHasher.hash.bind(fileHasher);
    const late = vi.spyOn(fileHasher, 'hash').mockImplementation(async (path, size) => {
      const sha256 = await real(path, size);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return /f\d*[05]\.txt$/.test(path) ? undefined : sha256;
    });
    try {
      const files: Record<string, string> = {};
      for (let i = 0; i < 5; i++) files[`big/b${i}.txt`] = String(i).repeat(1024 * 1024);
      for (let i = 0; i < 30; i++)
        files[`d${i % 3}/f${i}.txt`] = `file ${i} `.repeat(200_000).slice(0, 2 ** 20 + 1 + i);
      const changed = (text: string) => text.replaceAll('file', 'FILE');
      const store = await openContentStore({ root: join(root, 'store') });
      const viaWriter = await store.acquire(keyFor('late1'), async (destination, ctx) => {
        for (const [path, text] of Object.entries(files)) await ctx.writeFile(path, text);
        for (const [path, text] of Object.entries(files))
          if (/f\d*[05]\.txt$/.test(path)) await writeFile(join(destination, path), changed(text));
      });
      const owed = late.mock.calls.map(([path]) => path.split('/').slice(-2).join('/'));
      expect(owed).toContain('d0/f0.txt');
      expect(owed).toContain('d2/f29.txt');
      const untold = owed.filter((path) => /f\d*[05]\.txt$/.test(path));
      expect(untold).toHaveLength(6);
      // What the tree holds: the changed files where sealing hashed them, the written bytes elsewhere.
      const expected = Object.fromEntries(
        Object.entries(files).map(([path, text]) => [path, untold.includes(path) ? changed(text) : text]),
      );
      const plain = await store.acquire(keyFor('late2'), fillWith(expected));
      expect(viaWriter.digest).toBe(plain.digest);
      expect(viaWriter.files).toBe(35);
      expect(viaWriter.bytes).toBe(plain.bytes);
    } finally {
      late.mockRestore();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('lets the event loop run while a fill writes thousands of small files', async () => {
    // Small files are written synchronously; without turns of the event loop between slices
    // a fill of thousands would hold it for the whole fill (every step is a microtask).
    const store = await newStore();
    let turns = 0;
    let fillDone = false;
    const tick = () => {
      if (fillDone) return;
      turns += 1;
      setImmediate(tick);
    };
    let turnsAtFirstWrite = 0;
    await store.acquire(keyFor('loop'), async (_destination, ctx) => {
      setImmediate(tick);
      const data = Buffer.alloc(16 * 1024, 'x');
      await ctx.writeFile('d/first.txt', data); // the folder made, the mode checked: no more I/O but the writes
      turnsAtFirstWrite = turns;
      await Promise.all(
        Array.from({ length: 8 }, async (_, lane) => {
          for (let i = lane; i < 4000; i += 8) await ctx.writeFile(`d/f${i}.txt`, data);
        }),
      );
      fillDone = true;
    });
    // 4,000 writes take far longer than one 4 ms slice, so the loop must have turned several times.
    expect(turns - turnsAtFirstWrite).toBeGreaterThanOrEqual(3);
  });

  it('lets the event loop run while it seals thousands of files, written through the fill writer or not', async () => {
    // Sealing walks the tree synchronously, a slice at a time: without turns of the event
    // loop between slices it would hold it for the whole walk (every other await in it is on
    // a promise already settled, which lets no turn happen).
    for (const through of ['writer', 'plain'] as const) {
      const root = await tempDir();
      const destination = join(root, 'tree');
      const data = Buffer.alloc(64, 'x');
      const writer = new TreeWriter(nodeStoreFs, destination);
      if (through === 'writer') {
        for (let i = 0; i < 6000; i++) await writer.writeFile(`d${i % 30}/f${i}.txt`, data);
      } else {
        for (let d = 0; d < 30; d++) await mkdir(join(destination, `d${d}`), { recursive: true });
        for (let i = 0; i < 6000; i++) await writeFile(join(destination, `d${i % 30}`, `f${i}.txt`), data);
      }
      let turns = 0;
      let sealing = true;
      const tick = () => {
        if (!sealing) return;
        turns += 1;
        setImmediate(tick);
      };
      setImmediate(tick);
      const sealed = await sealTree(nodeStoreFs, destination, { normalize: true, known: writer.known() });
      sealing = false;
      expect(sealed.files).toBe(6000);
      // Sealing 6,000 files takes more than one 4 ms slice (here 20 ms and more), so the loop
      // turned at least once; without the turns it cannot turn at all.
      expect(turns, through).toBeGreaterThanOrEqual(1);
      await rm(root, { recursive: true, force: true });
    }
  });

  it('records the mode a file really has when the writer overwrites an existing file', async () => {
    const store = await newStore();
    const tree = await store.acquire(keyFor('ow'), async (destination, ctx) => {
      await mkdir(destination);
      await writeFile(join(destination, 'tool'), 'old', { mode: 0o755 });
      await ctx.writeFile('tool', 'new'); // asks for 0644, but an overwrite keeps 0755
      await ctx.writeFile('twice', 'a', { mode: 0o755 });
      await ctx.writeFile('twice', 'b');
    });
    expect((await stat(join(tree.path, 'tool'))).mode & 0o777).toBe(0o755);
    expect((await hashTree(tree.path)).digest).toBe(tree.digest);
    expect((await store.verify()).corrupt).toEqual([]);
  });

  it.each(['../x', '/etc/passwd', 'a/../../x', 'a//b', './a', 'a\\b', '', 'a\0b', '..', 'a/.', 'a/'])(
    'refuses the fill writer path %j',
    async (path) => {
      const store = await newStore();
      const error = await store.acquire(keyFor('w'), (_d, ctx) => ctx.writeFile(path, 'x')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FillFailedError);
      expect((error as FillFailedError).cause).toBeInstanceOf(FillOutsideDestinationError);
      expect(storeState(store.root).objects).toEqual([]);
    },
  );

  it('takes names that are only dots and more, or start with them', async () => {
    const store = await newStore();
    const names = ['...', '.a', 'b/..c', 'b/c..', 'b/.../d'];
    const tree = await store.acquire(keyFor('dots'), async (_d, ctx) => {
      for (const name of names) await ctx.writeFile(name, name);
    });
    for (const name of names) expect(await readFile(join(tree.path, name), 'utf8')).toBe(name);
    expect(tree.files).toBe(names.length);
  });
});

describe('the tree digest', () => {
  it('is SHA-256 over one line per entry, `type mode path NUL payload NUL`, in the byte order of the paths', async () => {
    const root = join(await tempDir(), 'tree');
    await mkdir(join(root, 'bin'), { recursive: true });
    await mkdir(join(root, 'é'), { recursive: true });
    await writeFile(join(root, 'bin/run'), 'echo\n', { mode: 0o755 });
    await writeFile(join(root, 'bin-notes.txt'), 'notes');
    await writeFile(join(root, 'é/ü.md'), 'unicode');
    await writeFile(join(root, 'Z.txt'), '');
    await symlink('bin/run', join(root, 'run'));
    for (const dir of ['', 'bin', 'é']) await chmod(join(root, dir), 0o755);
    await chmod(join(root, 'bin-notes.txt'), 0o644);
    await chmod(join(root, 'é/ü.md'), 0o644);
    await chmod(join(root, 'Z.txt'), 0o644);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const lines: [string, string][] = [
      ['bin', 'D 755 bin\0\0'],
      ['bin/run', `F 755 bin/run\0${sha('echo\n')}\0`],
      ['bin-notes.txt', `F 644 bin-notes.txt\0${sha('notes')}\0`],
      ['é', 'D 755 é\0\0'],
      ['é/ü.md', `F 644 é/ü.md\0${sha('unicode')}\0`],
      ['Z.txt', `F 644 Z.txt\0${sha('')}\0`],
      ['run', 'L 777 run\0bin/run\0'],
    ];
    lines.sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const expected = `sha256:${createHash('sha256')
      .update(lines.map(([, line]) => line).join(''))
      .digest('hex')}`;
    expect(await hashTree(root)).toEqual({ digest: expected, files: 4, bytes: 5 + 5 + 7 });
    // Published through the fill writer (sealing from what it recorded), the same digest.
    const store = await newStore();
    const viaWriter = await store.acquire(keyFor('digest'), async (destination, ctx) => {
      await ctx.writeFile('bin/run', 'echo\n', { mode: 0o755 });
      await ctx.writeFile('bin-notes.txt', 'notes');
      await ctx.writeFile('é/ü.md', 'unicode');
      await ctx.writeFile('Z.txt', '');
      await symlink('bin/run', join(destination, 'run'));
    });
    expect(viaWriter.digest).toBe(expected);
  });

  it('orders paths past U+FFFF by their UTF-8 bytes, not by UTF-16 code units', async () => {
    // UTF-16 puts a surrogate pair (U+1F600) before U+E000-U+FFFF; UTF-8 bytes put it after.
    const names = ['z.txt', '\u{E000}.txt', '\u{FFFD}.txt', '\u{1F600}.txt', '\u{1F600}/a.txt', '\u{10FFFF}.txt'];
    const root = join(await tempDir(), 'tree');
    await mkdir(join(root, '\u{1F600}'), { recursive: true, mode: 0o755 });
    await chmod(root, 0o755);
    for (const name of names) await writeFile(join(root, name), name, { mode: 0o644 });
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const lines: [string, string][] = [
      ['\u{1F600}', 'D 755 \u{1F600}\0\0'],
      ...names.map((name): [string, string] => [name, `F 644 ${name}\0${sha(name)}\0`]),
    ];
    lines.sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(lines.map(([path]) => path)).not.toEqual(lines.map(([path]) => path).sort()); // the premise
    const expected = `sha256:${createHash('sha256')
      .update(lines.map(([, line]) => line).join(''))
      .digest('hex')}`;
    expect((await hashTree(root)).digest).toBe(expected);
    const viaWriter = await (await newStore()).acquire(keyFor('astral'), async (_destination, ctx) => {
      for (const name of names) await ctx.writeFile(name, name);
    });
    expect(viaWriter.digest).toBe(expected);
  });
});

describe('modes and links', () => {
  it('keeps execute bits, strips setuid, setgid and sticky bits, and normalises the rest', async () => {
    const store = await newStore();
    const tree = await store.acquire(keyFor('modes'), async (destination) => {
      await mkdir(join(destination, 'dir'), { recursive: true });
      const files: Record<string, number> = {
        plain: 0o666,
        private: 0o600,
        exec: 0o700,
        'group-exec': 0o614,
        setuid: 0o4755,
        setgid: 0o2755,
      };
      for (const [name, mode] of Object.entries(files)) {
        await writeFile(join(destination, name), name);
        await chmod(join(destination, name), mode);
      }
      await chmod(join(destination, 'dir'), 0o1777);
    });
    const mode = async (name: string) => (await stat(join(tree.path, name))).mode & 0o7777;
    expect(await mode('plain')).toBe(0o644);
    expect(await mode('private')).toBe(0o644);
    expect(await mode('exec')).toBe(0o755);
    expect(await mode('group-exec')).toBe(0o755);
    expect(await mode('setuid')).toBe(0o755);
    expect(await mode('setgid')).toBe(0o755);
    expect(await mode('dir')).toBe(0o755);
    expect(await mode('.')).toBe(0o755);
  });

  it('keeps links that resolve inside the tree', async () => {
    const store = await newStore();
    const tree = await store.acquire(keyFor('links'), async (destination) => {
      await mkdir(join(destination, 'a/b'), { recursive: true });
      await writeFile(join(destination, 'a/b/target.md'), 'T');
      await symlink('b/target.md', join(destination, 'a/link.md'));
      await symlink('..', join(destination, 'a/b/up'));
      await symlink('.', join(destination, 'self'));
    });
    expect(await readFile(join(tree.path, 'a/link.md'), 'utf8')).toBe('T');
    expect(await readlink(join(tree.path, 'a/b/up'))).toBe('..');
    expect(await readFile(join(tree.path, 'a/b/up/link.md'), 'utf8')).toBe('T');
  });

  const refused: [string, (destination: string) => Promise<void>, string][] = [
    ['a link that leaves the tree', (d) => symlink('../../outside', join(d, 'out')), 'link-escapes'],
    ['an absolute link', (d) => symlink('/etc/passwd', join(d, 'abs')), 'link-absolute'],
    [
      'an absolute link to a file inside the tree',
      async (d) => {
        await writeFile(join(d, 'f'), 'x');
        await symlink(join(d, 'f'), join(d, 'abs'));
      },
      'link-absolute',
    ],
    ['a dangling link', (d) => symlink('missing', join(d, 'dangling')), 'link-dangling'],
    [
      'a looping link',
      async (d) => {
        await symlink('b', join(d, 'a'));
        await symlink('a', join(d, 'b'));
      },
      'link-loop',
    ],
    [
      'a chain of links that escapes only when followed',
      async (d) => {
        await mkdir(join(d, 'x'));
        await symlink('..', join(d, 'x/up'));
        await symlink('up/..', join(d, 'x/escape'));
      },
      'link-escapes',
    ],
    [
      'a named pipe',
      async (d) => {
        execFileSync('mkfifo', [join(d, 'pipe')]);
      },
      'special-file',
    ],
  ];
  it.each(refused)('refuses %s and publishes nothing', async (_name, make, reason) => {
    const store = await newStore();
    const error = await store
      .acquire(keyFor('bad'), async (destination) => {
        await mkdir(destination);
        await make(destination);
      })
      .catch((e: unknown) => e);
    expect(error, String(error)).toBeInstanceOf(UnsafeTreeError);
    expect((error as UnsafeTreeError).reason).toBe(reason);
    expect((error as UnsafeTreeError).code).toBe('CACHE_UNSAFE_TREE');
    expect(storeState(store.root)).toEqual({ objects: [], keys: [], links: [], staging: [] });
  });
});

describe('failed and cancelled acquisitions', () => {
  it('publishes nothing and leaves nothing when the fill throws', async () => {
    const store = await newStore();
    const boom = new Error('network down');
    const error = await store
      .acquire(keyFor('f'), async (destination) => {
        await mkdir(destination);
        await writeFile(join(destination, 'half'), 'x');
        throw boom;
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FillFailedError);
    expect((error as FillFailedError).code).toBe('CACHE_FILL_FAILED');
    expect((error as FillFailedError).cause).toBe(boom);
    expect(storeState(store.root)).toEqual({ objects: [], keys: [], links: [], staging: [] });
  });

  it('refuses a fill that writes beside its destination', async () => {
    const store = await newStore();
    const error = await store
      .acquire(keyFor('f'), async (destination) => {
        await fillWith({ a: 'x' })(destination, {} as never);
        await writeFile(join(destination, '..', 'stray'), 'x');
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FillOutsideDestinationError);
    expect((error as ContentCacheError).code).toBe('CACHE_FILL_OUTSIDE_DESTINATION');
    expect(storeState(store.root)).toEqual({ objects: [], keys: [], links: [], staging: [] });
  });

  it('refuses a fill that never creates its destination', async () => {
    const store = await newStore();
    const error = await store.acquire(keyFor('f'), async () => {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeTreeError);
    expect((error as UnsafeTreeError).reason).toBe('missing-destination');
  });

  it('refuses a destination that is a link to elsewhere', async () => {
    const store = await newStore();
    const elsewhere = await tempDir();
    const error = await store
      .acquire(keyFor('f'), (destination) => symlink(elsewhere, destination))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeTreeError);
    expect((error as UnsafeTreeError).reason).toBe('destination-not-a-directory');
  });

  it('rejects at once when the signal is already aborted, without filling', async () => {
    const store = await newStore();
    const controller = new AbortController();
    controller.abort();
    let filled = false;
    const error = await store
      .acquire(
        keyFor('f'),
        async () => {
          filled = true;
        },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AcquisitionAbortedError);
    expect(filled).toBe(false);
  });

  it('publishes nothing when cancelled during the fill, and settles only after cleanup', async () => {
    const store = await newStore();
    const controller = new AbortController();
    let sawAbort = false;
    const pending = store.acquire(
      keyFor('f'),
      async (destination, { signal }) => {
        await mkdir(destination);
        await writeFile(join(destination, 'a'), 'x');
        controller.abort(new Error('user went away'));
        // A fill that keeps writing a little after the abort: cleanup must wait for it.
        await new Promise((r) => setTimeout(r, 30));
        sawAbort = signal.aborted;
        await writeFile(join(destination, 'late'), 'x');
      },
      { signal: controller.signal },
    );
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AcquisitionAbortedError);
    expect(sawAbort).toBe(true);
    expect(storeState(store.root)).toEqual({ objects: [], keys: [], links: [], staging: [] });
  });

  it('lets the other callers of a shared acquisition finish when one of them aborts', async () => {
    const store = await newStore();
    const quitter = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const fill = async (destination: string) => {
      await gate;
      await fillWith({ a: 'x' })(destination, {} as never);
    };
    const leaving = store.acquire(keyFor('s'), fill, { signal: quitter.signal });
    const staying = store.acquire(keyFor('s'), fill);
    quitter.abort();
    await expect(leaving).rejects.toBeInstanceOf(AcquisitionAbortedError);
    release();
    const tree = await staying;
    expect(tree.fromCache).toBe(false);
    expect(await readFile(join(tree.path, 'a'), 'utf8')).toBe('x');
  });

  it('starts a new acquisition after a cancelled one instead of joining it', async () => {
    const store = await newStore();
    const controller = new AbortController();
    const first = store.acquire(
      keyFor('n'),
      async (destination, { signal }) => {
        await mkdir(destination);
        await new Promise((r) => signal.addEventListener('abort', r));
        throw signal.reason;
      },
      { signal: controller.signal },
    );
    controller.abort();
    const second = store.acquire(keyFor('n'), fillWith({ a: 'x' }));
    await expect(first).rejects.toBeInstanceOf(AcquisitionAbortedError);
    expect((await second).fromCache).toBe(false);
  });
});

describe('lookup', () => {
  it('finds a published key and misses an unknown one', async () => {
    const store = await newStore();
    expect(await store.lookup(keyFor('c1'))).toBeUndefined();
    const tree = await store.acquire(keyFor('c1'), fillWith({ a: 'x' }));
    expect(await store.lookup(keyFor('c1'))).toEqual({ ...tree, fromCache: true, source: 'store' });
    expect(await store.lookup(keyFor('c1', { other: true }))).toBeUndefined();
  });

  it('never answers with a link path that is not there yet: it waits for the link after the key record', async () => {
    const root = join(await tempDir(), 'store');
    const seen: string[] = [];
    let probe: ReturnType<typeof openContentStore> | undefined;
    // Every time a file lands in keys/ or links/, ask a second store what it sees at that instant.
    const fs: StoreFs = {
      ...nodeStoreFs,
      rename: async (from, to) => {
        await nodeStoreFs.rename(from, to);
        if (String(to).includes('/keys/') || String(to).includes('/links/')) {
          const found = await (await probe!).lookup(keyFor('c1'));
          seen.push(found ? await readFile(join(found.linkPath, 'a'), 'utf8') : 'miss');
        }
      },
    };
    probe = openContentStore({ root });
    const store = await openContentStore({ root, fs });
    await store.acquire(keyFor('c1'), fillWith({ a: 'x' }));
    // After the key record the link is not there yet: a miss, not a path that fails to open.
    expect(seen).toEqual(['miss', 'x']);
  });
});

describe('facts', () => {
  it('remembers a fact for any later store over the same root, and misses an unknown name', async () => {
    const root = join(await tempDir(), 'store');
    const store = await openContentStore({ root });
    expect(await store.recall('tree:https://h/r.git:c1:skills/a')).toBeUndefined();
    await store.remember('tree:https://h/r.git:c1:skills/a', 'a'.repeat(40));
    const again = await openContentStore({ root });
    expect(await again.recall('tree:https://h/r.git:c1:skills/a')).toBe('a'.repeat(40));
    expect(await again.recall('tree:https://h/r.git:c1:skills/b')).toBeUndefined();
    expect(visibleProblems(root)).toEqual([]);
  });

  it('treats a damaged fact file as a miss, and gc keeps facts', async () => {
    const root = join(await tempDir(), 'store');
    const store = await openContentStore({ root });
    await store.remember('n', 'v');
    await store.gc();
    expect(await store.recall('n')).toBe('v');
    const [file] = (await import('node:fs')).readdirSync(join(root, 'facts'));
    await writeFile(join(root, 'facts', file!), '{"name":"n","val');
    expect(await store.recall('n')).toBeUndefined();
  });
});

describe('verify and gc', () => {
  it('finds an object whose file changed, quarantines it, and the next acquisition fills again', async () => {
    const store = await newStore();
    const good = await store.acquire(keyFor('good'), fillWith({ a: 'fine' }));
    const bad = await store.acquire(keyFor('bad'), fillWith({ a: 'original' }));
    await writeFile(join(bad.path, 'a'), 'tampered');
    const report = await store.verify();
    expect(report.ok).toEqual([good.objectId]);
    expect(report.corrupt.map((c) => c.objectId)).toEqual([bad.objectId]);
    expect(report.corrupt[0]!.reason).toMatch(/digest/);

    const quarantined = await store.verify({ quarantine: true });
    expect(quarantined.corrupt[0]!.quarantinedTo).toContain('quarantine');
    expect(storeState(store.root).objects).toEqual([good.objectId]);
    const refilled = await store.acquire(keyFor('bad'), fillWith({ a: 'original' }));
    expect(refilled.fromCache).toBe(false);
    expect(await readFile(join(refilled.linkPath, 'a'), 'utf8')).toBe('original');
    expect((await store.verify()).corrupt).toEqual([]);
  });

  it('finds a changed mode and a missing file', async () => {
    const store = await newStore();
    const tree = await store.acquire(keyFor('m'), fillWith({ a: 'x', b: 'y' }));
    await chmod(join(tree.path, 'a'), 0o755);
    expect((await store.verify()).corrupt).toHaveLength(1);
  });

  it('removes objects no key or link reaches, and keeps the rest', async () => {
    const store = await newStore();
    const kept = await store.acquire(keyFor('kept'), fillWith({ a: 'kept' }));
    const dropped = await store.acquire(keyFor('dropped', { other: 1 }), fillWith({ a: 'dropped' }));
    // The host forgets the second declaration: its key record and link go.
    const { rm } = await import('node:fs/promises');
    await rm(dropped.linkPath);
    for (const name of storeState(store.root).keys) {
      const record = JSON.parse(await readFile(join(store.root, 'keys', name), 'utf8'));
      if (record.objectId === dropped.objectId) await rm(join(store.root, 'keys', name));
    }
    const report = await store.gc();
    expect(report.removedObjects).toEqual([dropped.objectId]);
    expect(report.freedBytes).toBe(7);
    expect(storeState(store.root).objects).toEqual([kept.objectId]);
    expect((await store.acquire(keyFor('kept'), () => Promise.reject(new Error('no fill')))).fromCache).toBe(true);
  });

  it('counts only the keys and links it removed itself, not those another process removed first', async () => {
    const root = join(await tempDir(), 'store');
    const setup = await openContentStore({ root });
    const a = await setup.acquire(keyFor('a', { a: 1 }), fillWith({ f: 'a' }));
    const b = await setup.acquire(keyFor('b', { b: 1 }), fillWith({ f: 'b' }));
    // Both objects go by hand, so both key records and both links lead nowhere.
    const { rm } = await import('node:fs/promises');
    await rm(join(root, 'objects', a.objectId), { recursive: true });
    await rm(join(root, 'objects', b.objectId), { recursive: true });
    // Another process removes the first key record and the first link gc removes, between
    // gc listing them and removing them.
    const raced: string[] = [];
    const racing = new Proxy(nodeStoreFs, {
      get: (target, name: keyof StoreFs) => {
        const real = target[name] as (...a: unknown[]) => unknown;
        if (name !== 'rm') return real;
        return async (...args: unknown[]) => {
          const path = String(args[0]);
          const folder = ['keys', 'links'].map((f) => join(root, f)).find((f) => path.startsWith(`${f}/`));
          if (folder && !raced.some((p) => p.startsWith(`${folder}/`))) {
            raced.push(path);
            await rm(path);
          }
          return real(...args);
        };
      },
    });
    const report = await (await openContentStore({ root, fs: racing })).gc();
    expect(raced).toHaveLength(2);
    expect(report.removedKeys).toBe(1);
    expect(report.removedLinks).toBe(1);
    expect(storeState(root).keys).toEqual([]);
    expect(storeState(root).links).toEqual([]);
  });

  it('fills again when gc collects a shared object between the check and the adoption', async () => {
    const root = join(await tempDir(), 'store');
    const other = await openContentStore({ root });
    const first = await other.acquire(keyFor('t', { a: 1 }), fillWith({ f: 'x' }));
    const { rm } = await import('node:fs/promises');
    await rm(first.linkPath);
    await rm(join(root, 'keys'), { recursive: true });
    await mkdir(join(root, 'keys'));
    // The object now exists with nothing reaching it. Collect it in the gap between the
    // acquirer seeing the object and adopting it under the lock, as another process's gc
    // does: one rename to the trash. The hit check reads synchronously, so the gap is
    // entered from its read of the key record.
    let collected = false;
    const hooked = new Proxy(nodeStoreFs, {
      get: (target, name: keyof StoreFs) => {
        const real = target[name] as (...a: unknown[]) => unknown;
        if (name !== 'openSync') return real;
        return (...args: unknown[]) => {
          if (!collected && String(args[0]).includes('/keys/')) {
            collected = true;
            renameSync(join(root, 'objects', first.objectId), join(root, 'trash', 'collected'));
          }
          return real(...args);
        };
      },
    });
    const store = await openContentStore({ root, fs: hooked });
    let filled = false;
    const tree = await store.acquire(keyFor('t', { b: 2 }), async (d) => {
      filled = true;
      await fillWith({ f: 'x' })(d, {} as never);
    });
    expect(collected).toBe(true);
    expect(filled).toBe(true);
    expect(await readFile(join(tree.linkPath, 'f'), 'utf8')).toBe('x');
    expect(visibleProblems(root)).toEqual([]);
  });

  it('removes staging folders of dead writers, and keeps those of live ones', async () => {
    const store = await newStore({ lock: { staleMs: 2000 } });
    const dead = join(store.root, 'staging', 'deadbeef');
    await mkdir(join(dead, 'content'), { recursive: true });
    await mkdir(`${dead}.lock`);
    const { utimes } = await import('node:fs/promises');
    const old = new Date(Date.now() - 60_000);
    await utimes(`${dead}.lock`, old, old);
    let gcWhileFilling: Awaited<ReturnType<typeof store.gc>> | undefined;
    await store.acquire(keyFor('live'), async (destination) => {
      await mkdir(destination);
      gcWhileFilling = await store.gc();
      await writeFile(join(destination, 'a'), 'x');
    });
    expect(gcWhileFilling!.removedStaging).toBe(1);
    expect(storeState(store.root).staging).toEqual([]);
    expect(visibleProblems(store.root)).toEqual([]);
  });
});
