import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodeFs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FAILURE_BOUNDARIES,
  type FailureScope,
  MAX_LINK_HOPS,
  type PackageFs,
  READ_FINDING_CODES,
  type ReadFileResult,
  type ResolveFailureReason,
  failureBoundary,
  nodePackageFs,
  openPluginReader,
  packagePathSegments,
  resolveInside,
} from '../src/read/index.js';
import { RULES } from '../src/findings.js';
import { type PluginSandbox, pluginSandbox } from './support/read-fixtures.js';

let box: PluginSandbox;
beforeEach(() => {
  box = pluginSandbox();
});
afterEach(async () => {
  await box.remove();
});

const isRoot = process.getuid?.() === 0;

/** A chain `name1 -> name2 -> ... -> name{hops} -> target`: exactly `hops` links followed. */
function chain(name: string, hops: number, target: string): void {
  // Targets are relative to the link's own folder.
  const base = name.slice(name.lastIndexOf('/') + 1);
  for (let i = 1; i <= hops; i++) box.link(`${name}${i}`, i === hops ? target : `${base}${i + 1}`);
}

type Expected = { realPath: string } | { reason: ResolveFailureReason; at: string };

describe('resolveInside: link states', () => {
  // Each case builds its tree in the sandbox, then resolves one path against the root.
  // realPath is relative to the root's real path.
  const cases: [string, () => void, string, Expected][] = [
    ['a plain file', () => box.file('plugin.json'), 'plugin.json', { realPath: 'plugin.json' }],
    ['a "./"-prefixed path with a trailing slash', () => box.dir('skills/a'), './skills/a/', { realPath: 'skills/a' }],
    ['the root itself', () => undefined, '', { realPath: '' }],
    [
      'a link inside the root to a file',
      () => {
        box.file('real.txt');
        box.link('l', 'real.txt');
      },
      'l',
      { realPath: 'real.txt' },
    ],
    [
      'a link inside the root to a folder',
      () => {
        box.file('d/f.txt');
        box.link('dl', 'd');
      },
      'dl/f.txt',
      { realPath: 'd/f.txt' },
    ],
    [
      'a link to a folder, itself',
      () => {
        box.dir('d');
        box.link('dl', 'd');
      },
      'dl',
      { realPath: 'd' },
    ],
    [
      'a chain of links within the root',
      () => {
        box.file('f');
        box.link('a', 'b');
        box.link('b', 'sub/c');
        box.link('sub/c', '../f');
      },
      'a',
      { realPath: 'f' },
    ],
    [
      'a link climbing with ".." but staying inside',
      () => {
        box.file('f');
        box.link('d/back', '../f');
      },
      'd/back',
      { realPath: 'f' },
    ],
    [
      `a chain of ${MAX_LINK_HOPS} links`,
      () => {
        box.file('f');
        chain('h', MAX_LINK_HOPS, 'f');
      },
      'h1',
      { realPath: 'f' },
    ],
    [
      `a chain of ${MAX_LINK_HOPS + 1} links`,
      () => {
        box.file('f');
        chain('h', MAX_LINK_HOPS + 1, 'f');
      },
      'h1',
      { reason: 'too-many-hops', at: 'h1' },
    ],
    [
      '40 hops over two components (20 + 20)',
      () => {
        box.file('d/f');
        chain('x', 20, 'd');
        chain('d/y', 20, 'f');
      },
      'x1/y1',
      { realPath: 'd/f' },
    ],
    [
      'hops counted over the whole path, not per component (20 + 21)',
      () => {
        box.file('d/f');
        chain('x', 20, 'd');
        chain('d/y', 21, 'f');
      },
      'x1/y1',
      { reason: 'too-many-hops', at: 'x1/y1' },
    ],
    [
      'a loop a -> b -> a',
      () => {
        box.link('a', 'b');
        box.link('b', 'a');
      },
      'a',
      { reason: 'loop', at: 'a' },
    ],
    ['a self-link', () => box.link('self', 'self'), 'self', { reason: 'loop', at: 'self' }],
    ['a link into itself (l -> l/x)', () => box.link('l', 'l/x'), 'l', { reason: 'loop', at: 'l' }],
    [
      'a loop reached through a folder',
      () => {
        box.link('d/a', 'b');
        box.link('d/b', 'a');
      },
      'd/a/x',
      { reason: 'loop', at: 'd/a' },
    ],
    [
      'the same link followed twice, each time to its end, is no loop',
      () => {
        box.file('d/f');
        box.link('d/up', '..');
      },
      'd/up/d/up/d/f',
      { realPath: 'd/f' },
    ],
    ['a dangling link', () => box.link('gone', 'nothing-here'), 'gone', { reason: 'dangling', at: 'gone' }],
    [
      'a link through a file',
      () => {
        box.file('f');
        box.link('l', 'f/x');
      },
      'l',
      { reason: 'dangling', at: 'l' },
    ],
    ['a missing file, no link involved', () => undefined, 'nope.txt', { reason: 'missing', at: 'nope.txt' }],
    [
      'a missing file under a linked folder',
      () => {
        box.dir('d');
        box.link('dl', 'd');
      },
      'dl/nope',
      { reason: 'missing', at: 'dl/nope' },
    ],
    ['a path through a file', () => box.file('f'), 'f/x', { reason: 'missing', at: 'f/x' }],
    [
      'an absolute link to a file inside the root (its real path)',
      () => {
        box.file('f');
        box.link('abs', join(realpathSync(box.root), 'f'));
      },
      'abs',
      { realPath: 'f' },
    ],
    [
      'an absolute link inside the root that climbs out after the root',
      () => box.link('abs', `${realpathSync(box.root)}/../outside/secret.txt`),
      'abs',
      { reason: 'outside-root', at: 'abs' },
    ],
    [
      'an absolute link outside the root',
      () => box.link('abs', join(box.outside, 'secret.txt')),
      'abs',
      { reason: 'outside-root', at: 'abs' },
    ],
    ['an absolute link to /', () => box.link('abs', '/'), 'abs/etc/passwd', { reason: 'outside-root', at: 'abs' }],
    [
      'a relative link climbing out',
      () => box.link('up', '../outside/secret.txt'),
      'up',
      { reason: 'outside-root', at: 'up' },
    ],
    [
      'a dangling link climbing out is reported as outside',
      () => box.link('up', '../no-such'),
      'up',
      { reason: 'outside-root', at: 'up' },
    ],
    [
      // d/x -> up/.. looks like d/ on paper; followed, up is the root and its parent is outside.
      'a link through a linked folder that leaves only when followed',
      () => {
        box.link('d/up', '..');
        box.link('d/x', 'up/..');
      },
      'd/x/outside/secret.txt',
      { reason: 'outside-root', at: 'd/x' },
    ],
    [
      'a folder link leaving the root, at the folder',
      () => box.link('skills', '../outside'),
      'skills/a/SKILL.md',
      { reason: 'outside-root', at: 'skills' },
    ],
    ['a fifo resolves (reading judges its kind)', () => box.fifo('p'), 'p', { realPath: 'p' }],
  ];

  it.each(cases)('%s', async (_name, build, relPath, expected) => {
    build();
    const result = await resolveInside(box.root, relPath);
    if ('realPath' in expected) {
      const real = realpathSync(box.root);
      expect(result).toEqual({ ok: true, realPath: expected.realPath === '' ? real : join(real, expected.realPath) });
    } else {
      expect(result).toMatchObject({ ok: false, ...expected });
    }
  });

  it('a plugin root reached through a link resolves against its real path', async () => {
    box.file('plugin.json');
    const alias = join(box.base, 'alias');
    symlinkSync(box.root, alias);
    expect(await resolveInside(alias, 'plugin.json')).toEqual({
      ok: true,
      realPath: join(realpathSync(box.root), 'plugin.json'),
    });
  });

  it('an absolute link spelled through the root path as given is inside', async () => {
    const alias = join(box.base, 'alias');
    symlinkSync(box.root, alias);
    box.file('f');
    box.link('abs', join(alias, 'f'));
    expect(await resolveInside(alias, 'abs')).toEqual({ ok: true, realPath: join(realpathSync(box.root), 'f') });
  });

  it('never looks at anything outside the root, not even to lstat it', async () => {
    box.link('up', '../outside/secret.txt');
    const touched: string[] = [];
    const watching: PackageFs = {
      ...nodePackageFs,
      lstat: (p) => {
        touched.push(p);
        return nodePackageFs.lstat(p);
      },
    };
    await resolveInside(box.root, 'up', watching);
    const real = realpathSync(box.root);
    expect(touched.length).toBeGreaterThan(0);
    for (const path of touched) expect(path === real || path.startsWith(`${real}/`)).toBe(true);
  });

  it('a missing plugin root is missing, a file as the root is not a directory', async () => {
    expect(await resolveInside(join(box.base, 'none'), 'plugin.json')).toMatchObject({
      ok: false,
      reason: 'missing',
      at: '',
    });
    expect(await resolveInside(join(box.outside, 'secret.txt'), 'x')).toMatchObject({
      ok: false,
      reason: 'not-directory',
      at: '',
    });
  });
});

describe('package paths', () => {
  it.each([['../x'], ['a/../b'], ['..'], ['/etc/passwd'], ['a\\b'], ['a\0b'], ['C:/x'], ['c:x']])(
    '%j is refused',
    async (relPath) => {
      expect(packagePathSegments(relPath)).toBeUndefined();
      expect(await resolveInside(box.root, relPath)).toMatchObject({ ok: false, reason: 'invalid-path' });
    },
  );

  it.each([
    ['', []],
    ['.', []],
    ['./skills/a/', ['skills', 'a']],
    ['skills//a/./SKILL.md', ['skills', 'a', 'SKILL.md']],
    ['..hidden/x..', ['..hidden', 'x..']],
  ] as const)('%j has the segments %j', (relPath, segments) => {
    expect(packagePathSegments(relPath)).toEqual(segments);
  });
});

describe('openPluginReader: reading files', () => {
  it('reads a regular file, through links inside the root', async () => {
    box.file('plugin.json', '{"name":"x"}');
    box.link('alias.json', 'plugin.json');
    const reader = openPluginReader(box.root);
    const result = await reader.readFile('./alias.json');
    expect(result.ok && Buffer.from(result.bytes).toString()).toBe('{"name":"x"}');
    expect(result).toMatchObject({
      ok: true,
      path: 'alias.json',
      realPath: join(realpathSync(box.root), 'plugin.json'),
    });
    expect(reader.findings).toEqual([]);
  });

  it('an absent file is absent, without a finding (§6.2)', async () => {
    const reader = openPluginReader(box.root);
    expect(await reader.readFile('mcp.json')).toEqual({ ok: false, absent: true, path: 'mcp.json' });
    expect(reader.findings).toEqual([]);
  });

  it.each([
    ['a fifo', async () => void box.fifo('p'), 'a pipe'],
    ['a socket', async () => void (await box.socket('s')), 'a socket'],
    ['a directory', async () => void box.dir('p'), 'a directory'],
  ])('%s is not read', async (_name, build, kind) => {
    await build();
    const reader = openPluginReader(box.root);
    const result = await reader.readFile(_name === 'a socket' ? 's' : 'p');
    expect(result).toMatchObject({
      ok: false,
      absent: false,
      scope: 'file',
      finding: { code: 'read.not-regular-file', rule: 'AR9O5', severity: 'warning' },
    });
    expect(!result.ok && !result.absent && result.finding.message).toContain(kind);
  });

  it('a device node is not read (a character device where the test may create one, else a link to /dev/null)', async () => {
    let made = true;
    try {
      execFileSync('mknod', [join(box.root, 'dev'), 'c', '1', '3'], { stdio: 'ignore' });
    } catch {
      made = false;
    }
    const reader = openPluginReader(box.root);
    if (made) {
      expect(await reader.readFile('dev')).toMatchObject({ ok: false, finding: { code: 'read.not-regular-file' } });
    }
    box.link('null', '/dev/null');
    expect(await reader.readFile('null')).toMatchObject({ ok: false, finding: { code: 'read.outside-root' } });
  });

  it('a fifo swapped in after the check neither blocks the open nor is read', async () => {
    box.file('f', 'data');
    const fifo = join(box.base, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const swapping: PackageFs = { ...nodePackageFs, open: (_p, flags) => nodePackageFs.open(fifo, flags) };
    const result = await openPluginReader(box.root, { fs: swapping }).readFile('f');
    expect(result).toMatchObject({
      ok: false,
      finding: { code: 'read.unreadable', message: 'changed while it was being read' },
    });
  });

  it('a file replaced by another between the check and the open is not read', async () => {
    box.file('f', 'data');
    const other = join(box.outside, 'secret.txt');
    const swapping: PackageFs = { ...nodePackageFs, open: (_p, flags) => nodePackageFs.open(other, flags) };
    const result = await openPluginReader(box.root, { fs: swapping }).readFile('f');
    expect(result).toMatchObject({ ok: false, finding: { code: 'read.unreadable' } });
  });

  it('a file without read permission: refused, or read when the process is root (root ignores mode bits)', async () => {
    const abs = box.file('locked.txt', 'locked');
    chmodSync(abs, 0o000);
    const result = await openPluginReader(box.root).readFile('locked.txt');
    if (isRoot) {
      expect(result.ok && Buffer.from(result.bytes).toString()).toBe('locked');
    } else {
      expect(result).toMatchObject({
        ok: false,
        scope: 'file',
        finding: { code: 'read.unreadable', message: 'cannot be opened (EACCES)' },
      });
    }
    chmodSync(abs, 0o644);
  });

  it('a file the filesystem refuses to open is unreadable, whoever runs', async () => {
    box.file('skills/a/SKILL.md');
    const denying: PackageFs = {
      ...nodePackageFs,
      open: async () => {
        throw Object.assign(new Error('denied'), { code: 'EACCES' });
      },
    };
    const result = await openPluginReader(box.root, { fs: denying }).readFile('skills/a/SKILL.md');
    expect(result).toMatchObject({
      ok: false,
      scope: 'skill',
      finding: { code: 'read.unreadable', severity: 'error', message: 'cannot be opened (EACCES)' },
    });
  });

  it('a folder the filesystem refuses to enter makes the paths below it unreadable at that folder', async () => {
    box.file('skills/a/SKILL.md');
    const denying: PackageFs = {
      ...nodePackageFs,
      lstat: async (p) => {
        if (p.endsWith('/skills/a')) throw Object.assign(new Error('denied'), { code: 'EACCES' });
        return nodePackageFs.lstat(p);
      },
    };
    const result = await openPluginReader(box.root, { fs: denying }).readFile('skills/a/SKILL.md');
    expect(result).toMatchObject({
      ok: false,
      scope: 'skill',
      finding: { code: 'read.unreadable', message: 'cannot be read at skills/a (EACCES)' },
    });
  });
});

describe('openPluginReader: size limits', () => {
  /** The node filesystem, recording how many bytes each read asked for. */
  function measuring(): { fs: PackageFs; asked: number[] } {
    const asked: number[] = [];
    const fs: PackageFs = {
      ...nodePackageFs,
      open: async (path, flags) => {
        const handle = await nodeFs.open(path, flags);
        return {
          stat: () => handle.stat(),
          read: (buffer, offset, length, position) => {
            asked.push(length);
            return handle.read(buffer, offset, length, position);
          },
          close: () => handle.close(),
        };
      },
    };
    return { fs, asked };
  }

  it('a file at the per-file limit is read; one byte more is refused without reading it', async () => {
    box.file('ten', '0123456789');
    box.file('eleven', '0123456789A');
    const { fs, asked } = measuring();
    const reader = openPluginReader(box.root, { maxFileBytes: 10, fs });
    expect(await reader.readFile('ten')).toMatchObject({ ok: true });
    const readsBefore = asked.length;
    expect(await reader.readFile('eleven')).toMatchObject({
      ok: false,
      scope: 'file',
      finding: { code: 'read.file-too-large', message: 'is 11 bytes, over the limit of 10' },
    });
    expect(asked.length).toBe(readsBefore);
  });

  it('an oversized SKILL.md takes its skill with it', async () => {
    box.file('skills/a/SKILL.md', 'x'.repeat(20));
    const result = await openPluginReader(box.root, { maxFileBytes: 10 }).readFile('skills/a/SKILL.md');
    expect(result).toMatchObject({
      ok: false,
      scope: 'skill',
      finding: { code: 'read.file-too-large', severity: 'error' },
    });
  });

  it('the package limit counts every file read once, and past it rejects the plugin for every later read', async () => {
    box.file('a', '12345678');
    box.file('b', '12345678');
    box.file('c', '12345678');
    box.file('d', '1');
    const reader = openPluginReader(box.root, { maxPackageBytes: 20 });
    expect(await reader.readFile('a')).toMatchObject({ ok: true });
    expect(await reader.readFile('a')).toMatchObject({ ok: true });
    expect(await reader.readFile('b')).toMatchObject({ ok: true });
    expect(reader.bytesRead).toBe(16);
    const over = await reader.readFile('c');
    expect(over).toMatchObject({
      ok: false,
      scope: 'plugin',
      finding: { code: 'read.package-too-large', severity: 'error', path: 'c' },
    });
    expect(await reader.readFile('d')).toEqual(over);
    expect(await reader.list('')).toEqual(over);
    expect(reader.findings.map((f) => f.code)).toEqual(['read.package-too-large']);
  });

  it('readAhead: a read counts only when taken, so one never taken neither reports a finding nor counts its bytes', async () => {
    box.file('a', '1234567890');
    box.file('b', '1234567890');
    box.link('c', '../outside');
    box.file('d', '1234567890');
    const reader = openPluginReader(box.root, { maxPackageBytes: 25 });
    const take = reader.readAhead(['a', 'b', 'c', 'd']);
    expect(await take(0)).toMatchObject({ ok: true, path: 'a' });
    // b and c were read ahead of a, and never taken: d fits beside a, and c's escape is not reported.
    expect(await take(3)).toMatchObject({ ok: true, path: 'd' });
    expect(reader.bytesRead).toBe(20);
    expect(reader.findings).toEqual([]);
    // Taken now, b is the read one at a time would have refused at that point.
    expect(await take(1)).toMatchObject({
      ok: false,
      scope: 'plugin',
      finding: { code: 'read.package-too-large', path: 'b' },
    });
    expect(reader.findings.map((f) => f.code)).toEqual(['read.package-too-large']);
  });

  it('readAhead: the same results as readFile one at a time, whatever the window', async () => {
    const paths: string[] = [];
    for (let i = 0; i < 40; i++) {
      const path = `f${String(i).padStart(2, '0')}`;
      if (i % 7 === 3) box.link(path, '/etc/hostname');
      else if (i % 11 === 5) box.dir(path);
      else box.file(path, 'x'.repeat(i));
      paths.push(path);
    }
    paths.push('missing');
    const one = openPluginReader(box.root, { maxPackageBytes: 500 });
    const ahead = openPluginReader(box.root, { maxPackageBytes: 500 });
    const take = ahead.readAhead(paths);
    for (const [index, path] of paths.entries()) expect(await take(index)).toEqual(await one.readFile(path));
    expect(ahead.findings).toEqual(one.findings);
    expect(ahead.bytesRead).toBe(one.bytesRead);
  });

  it('a listed path is read where its listing saw it, and resolved from the root when it is no longer there', async () => {
    box.file('skills/a/notes.md', 'inside');
    box.file('skills/b/notes.md', 'moved');
    const real = realpathSync(box.root);
    const reader = openPluginReader(box.root);
    expect(await reader.readFile({ path: 'skills/a/notes.md', realPath: `${real}/skills/a/notes.md` })).toMatchObject({
      ok: true,
      path: 'skills/a/notes.md',
      realPath: `${real}/skills/a/notes.md`,
    });
    // Listed at another place that no longer holds it: the path itself decides.
    const gone = await reader.readFile({ path: 'skills/b/notes.md', realPath: `${real}/skills/b/gone.md` });
    expect(gone).toMatchObject({ ok: true, realPath: `${real}/skills/b/notes.md` });
    expect(Buffer.from((gone as { bytes: Uint8Array }).bytes).toString()).toBe('moved');
    // A .git path is refused whatever the listing says.
    box.file('.git/config', '[core]');
    expect(await reader.readFile({ path: '.git/config', realPath: `${real}/.git/config` })).toMatchObject({
      ok: false,
      finding: { code: 'read.git-metadata' },
    });
  });

  /** Appends `extra` to the file right after the reader measured it, before its first read. */
  function growing(extra: string): { fs: PackageFs; asked: number[] } {
    const { fs, asked } = measuring();
    return {
      asked,
      fs: {
        ...fs,
        open: async (path, flags) => {
          const handle = await fs.open(path, flags);
          return {
            ...handle,
            stat: async () => {
              const stats = await handle.stat();
              appendFileSync(path, extra);
              return stats;
            },
            read: handle.read,
            close: handle.close,
          };
        },
      },
    };
  }

  it('a file that grows between the measure and the read, staying under the limit, is refused as changed', async () => {
    box.file('f', '12345678');
    const { fs, asked } = growing('9');
    const result = await openPluginReader(box.root, { maxFileBytes: 10, fs }).readFile('f');
    expect(result).toMatchObject({
      ok: false,
      finding: { code: 'read.unreadable', message: 'changed size while it was being read' },
    });
    expect(asked.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(9);
  });

  it('a file that grows past the limit while read is refused as too large, reading at most one byte past its measured size', async () => {
    box.file('f', '0123456789');
    const { fs, asked } = growing('x'.repeat(1000));
    const result = await openPluginReader(box.root, { maxFileBytes: 10, fs }).readFile('f');
    expect(result).toMatchObject({
      ok: false,
      finding: { code: 'read.file-too-large', message: 'grew over the limit of 10 bytes while it was being read' },
    });
    expect(asked[0]).toBe(11);
    expect(asked.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(11);
  });
});

describe('openPluginReader: listing and resolving', () => {
  it('lists a folder in byte order with the kind of each entry, links not followed', async () => {
    box.file('skills/b/SKILL.md');
    box.file('skills/A/SKILL.md');
    box.file('skills/readme.md');
    box.link('skills/c', 'b');
    await box.socket('skills/sock');
    const result = await openPluginReader(box.root).list('skills');
    expect(result).toMatchObject({
      ok: true,
      entries: [
        { name: 'A', kind: 'directory' },
        { name: 'b', kind: 'directory' },
        { name: 'c', kind: 'link' },
        { name: 'readme.md', kind: 'file' },
        { name: 'sock', kind: 'other' },
      ],
    });
  });

  it('a skills location that is a file invalidates the skills component type (§6.2)', async () => {
    box.file('skills');
    const result = await openPluginReader(box.root).list('skills');
    expect(result).toMatchObject({
      ok: false,
      scope: 'skills',
      finding: { code: 'read.not-directory', severity: 'error' },
    });
  });

  it('a skills location leaving the root invalidates the skills component type (§4.1 item 2)', async () => {
    box.link('skills', '../outside');
    const result = await openPluginReader(box.root).list('skills');
    expect(result).toMatchObject({ ok: false, scope: 'skills', finding: { code: 'read.outside-root' } });
  });

  it('an MCP command leaving the root invalidates that server entry only (§4.1 item 4)', async () => {
    box.link('bin/server', '../../outside/secret.txt');
    box.file('bin/ok');
    const reader = openPluginReader(box.root);
    expect(await reader.resolve('./bin/server', { use: 'mcp-server' })).toMatchObject({
      ok: false,
      scope: 'mcp-server',
      finding: { severity: 'error' },
    });
    expect(await reader.resolve('./bin/ok', { use: 'mcp-server' })).toMatchObject({ ok: true, kind: 'file' });
  });

  it('keeps each finding once per path and code', async () => {
    box.link('LICENSE', '../outside/secret.txt');
    const reader = openPluginReader(box.root);
    await reader.readFile('LICENSE');
    await reader.readFile('./LICENSE');
    expect(reader.findings).toEqual([
      {
        code: 'read.outside-root',
        rule: 'AR9O5',
        severity: 'warning',
        path: 'LICENSE',
        message: 'resolves outside the plugin root',
      },
    ]);
  });

  it('never quotes a link target in a message', async () => {
    box.link('up', '../outside/secret.txt');
    box.link('gone', 'token-like-value');
    const reader = openPluginReader(box.root);
    await reader.readFile('up');
    await reader.readFile('gone');
    for (const f of reader.findings) expect(f.message).not.toMatch(/secret|token|outside\//);
  });
});

describe('failure boundaries (§4.1)', () => {
  it.each([
    ['', 'package', 'plugin'],
    ['plugin.json', 'package', 'plugin'],
    ['mcp.json', 'package', 'mcp'],
    ['skills', 'package', 'skills'],
    ['skills/a', 'package', 'skill'],
    ['skills/a/SKILL.md', 'package', 'skill'],
    ['skills/a/scripts/run.sh', 'package', 'file'],
    ['skills/a/references', 'package', 'file'],
    ['nested/plugin.json', 'package', 'file'],
    ['nested/mcp.json', 'package', 'file'],
    ['LICENSE', 'package', 'file'],
    ['com.example.client/hooks/hooks.json', 'package', 'file'],
    ['bin/server', 'mcp-server', 'mcp-server'],
    ['skills/a/SKILL.md', 'mcp-server', 'mcp-server'],
  ] as const)('a failure at %j used as %s disables: %s', (at, use, scope) => {
    const boundary = failureBoundary(at, use);
    expect(boundary.scope).toBe(scope);
    expect(boundary.severity).toBe(scope === 'file' ? 'warning' : 'error');
  });

  it('the table is ordered narrowest first and ends with the catch-all for any other path', () => {
    const widths: Record<FailureScope, number> = { 'mcp-server': 1, skill: 1, mcp: 2, skills: 2, plugin: 3, file: 4 };
    const order = FAILURE_BOUNDARIES.slice(0, -1).map((b) => widths[b.scope]);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(FAILURE_BOUNDARIES[FAILURE_BOUNDARIES.length - 1]).toMatchObject({
      scope: 'file',
      paths: ['**'],
      section: '§4.1 item 5',
    });
    for (const b of FAILURE_BOUNDARIES) expect(b.section).toMatch(/^§4\.1/);
  });

  // Each file kind made a link out of the root, then read: what a client disables.
  const kinds: [string, string, string, FailureScope][] = [
    ['the manifest', 'plugin.json', 'plugin.json', 'plugin'],
    ['mcp.json', 'mcp.json', 'mcp.json', 'mcp'],
    ["a skill's SKILL.md", 'skills/a/SKILL.md', 'skills/a/SKILL.md', 'skill'],
    ['a skill folder', 'skills/a', 'skills/a/SKILL.md', 'skill'],
    ['a file inside a skill folder', 'skills/a/references/x.md', 'skills/a/references/x.md', 'file'],
    ["a folder inside a skill's folder", 'skills/a/references', 'skills/a/references/x.md', 'file'],
    ['the skills location', 'skills', 'skills/a/SKILL.md', 'skills'],
    ['a root file', 'LICENSE', 'LICENSE', 'file'],
    ['an extension directory file', 'com.example.client/hooks.json', 'com.example.client/hooks.json', 'file'],
  ];

  it.each(kinds)('%s (%s) leaving the root: reading %j disables %s', async (_name, linked, read, scope) => {
    box.file('skills/a/SKILL.md');
    box.file('skills/a/references/x.md');
    const depth = linked.split('/').length - 1;
    await nodeFs.rm(join(box.root, linked), { recursive: true, force: true });
    box.link(linked, `${'../'.repeat(depth + 1)}outside`);
    const result: ReadFileResult = await openPluginReader(box.root).readFile(read);
    expect(result).toMatchObject({
      ok: false,
      scope,
      finding: {
        code: 'read.outside-root',
        rule: 'AR9O5',
        severity: scope === 'file' ? 'warning' : 'error',
        path: read,
      },
    });
  });

  it('a failure of the plugin root itself rejects the plugin', async () => {
    const file = join(box.base, 'not-a-folder');
    writeFileSync(file, '');
    expect(await openPluginReader(file).readFile('plugin.json')).toMatchObject({
      ok: false,
      scope: 'plugin',
      finding: { code: 'read.not-directory' },
    });
  });
});

describe('READ_FINDING_CODES', () => {
  it('every code is an AR9O5 finding whose text cites a spec section or names its limit', () => {
    for (const [code, info] of Object.entries(READ_FINDING_CODES)) {
      expect(code).toMatch(/^read\.[a-z-]+$/);
      expect(RULES).toContain(info.rule);
      expect(info.rule).toBe('AR9O5');
      expect(info.text.length).toBeGreaterThan(20);
    }
  });
});
