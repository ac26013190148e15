import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tarOf, type TarOfEntry } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArchiveError, gitPathProblem, readArchive } from '../../src/index.js';

/**
 * git itself is the oracle: `git update-index --cacheinfo` runs verify_path, which refuses
 * every path with a `.git` segment in any spelling NTFS or HFS+ folds into `.git` (both
 * protections on), and a `.gitmodules` symbolic link in the same spellings.
 */
let repo: string;
let blob: string;
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});
beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'git-oracle-'));
  const git = (args: string[], input?: string) => spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8', input });
  expect(git(['init', '-q']).status).toBe(0);
  blob = git(['hash-object', '-w', '--stdin'], 'x\n').stdout.trim();
});

let asked = 0;
/** Whether git refuses `path` (its last segment named as given, put in a folder of its own so no two paths conflict). */
function gitRefuses(path: string, mode: '100644' | '120000'): boolean {
  path = `q${++asked}/${path}`;
  const result = spawnSync(
    'git',
    [
      '-C',
      repo,
      '-c',
      'core.protectHFS=true',
      '-c',
      'core.protectNTFS=true',
      'update-index',
      '--add',
      '--cacheinfo',
      `${mode},${blob},${path}`,
    ],
    {
      encoding: 'utf8',
    },
  );
  return result.status !== 0;
}

const DOT_GIT_SPELLINGS = [
  '.git',
  '.GIT',
  '.Git',
  '.gIT',
  'git~1',
  'GIT~1',
  '.git.',
  '.git ',
  '.git. . .',
  '.GIT  ',
  '.git:x',
  '.git::$INDEX_ALLOCATION',
  '.g\u200cit',
  '\u200d.git',
  '.git\u200e',
  '.\u202agit',
  '.gi\u206ft',
  '\ufeff.git',
  'a\\.git',
];
// The last two: HFS+ keeps the trailing dot and NTFS keeps the joiners, so no filesystem reads them as .git.
const NOT_DOT_GIT = [
  '.gitx',
  '.github',
  '.gitignore',
  '.gitmodules',
  'git',
  'git~2',
  '.git~1',
  'x.git',
  '.g it',
  '.gi\u00adt',
  '.gıt',
  'ｇit',
  '.git.x',
  '.G\u200cI\u200dT.',
  'g\u200cit~1',
];

/** Spellings built at random from the rules (case, ignorable code points, NTFS tails), seeded so a failure repeats. */
function generatedSpellings(count: number): string[] {
  let seed = 0x2545f491;
  const next = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const ignorable = [
    '\u200c',
    '\u200d',
    '\u200e',
    '\u200f',
    '\u202a',
    '\u202b',
    '\u202c',
    '\u202d',
    '\u202e',
    '\u206a',
    '\u206b',
    '\u206c',
    '\u206d',
    '\u206e',
    '\u206f',
    '\ufeff',
  ];
  const near = ['\u00ad', '\u2060', '\u200b', ' ', '-', '~', '1'];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const base = next(2) === 0 ? '.git' : 'git~1';
    let name = '';
    for (const ch of base) {
      name += next(2) === 0 ? ch.toUpperCase() : ch;
      if (next(4) === 0)
        name += (next(3) === 0 ? near : ignorable)[next(next(3) === 0 ? near.length : ignorable.length)] ?? '';
    }
    for (let tail = next(4); tail > 0; tail--) name += ['.', ' ', '\u200c', 'x'][next(4)];
    out.push(name);
  }
  return out;
}

describe('gitPathProblem refuses exactly what git refuses', () => {
  it.each(DOT_GIT_SPELLINGS)('refuses %j as a folder and as a file, as git does', (name) => {
    expect(gitPathProblem(`${name}/config`)).toBe('git-dir');
    expect(gitPathProblem(`skills/a/${name}`)).toBe('git-dir');
    expect(gitRefuses(`${name}/config`, '100644')).toBe(true);
  });

  it.each(NOT_DOT_GIT)('accepts %j, as git does', (name) => {
    expect(gitPathProblem(`${name}/config`)).toBeUndefined();
    expect(gitRefuses(`${name}/config`, '100644')).toBe(false);
  });

  it('agrees with git on 48 generated spellings of .git', () => {
    const generated = generatedSpellings(48);
    const refused = generated.filter((name) => gitPathProblem(`${name}/x`) !== undefined);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    expect(
      generated.filter((name) => (gitPathProblem(`${name}/x`) !== undefined) !== gitRefuses(`${name}/x`, '100644')),
    ).toEqual([]);
  });

  it('agrees with git on every spelling of .git with one character dropped or replaced', () => {
    // Near misses, most of them without `git` in any case: the names the quick answer (no
    // `git`, no ignorable code point: not .git) gives, checked against git one by one.
    const near = new Set<string>();
    for (const name of [...DOT_GIT_SPELLINGS, ...generatedSpellings(8)]) {
      const chars = [...name];
      for (let i = 0; i < chars.length; i++) {
        near.add([...chars.slice(0, i), ...chars.slice(i + 1)].join(''));
        for (const other of ['x', 'G', '.', '\u200c'])
          near.add([...chars.slice(0, i), other, ...chars.slice(i + 1)].join(''));
      }
    }
    near.delete('');
    // A name that starts with a backslash (`\.git`) git lets through and we refuse: its
    // second part is `.git`, and Windows reads the backslash as a separator. Stricter, so left out.
    const names = [...near].filter((name) => !name.startsWith('\\'));
    expect(names.filter((name) => !/git/i.test(name)).length).toBeGreaterThan(100);
    expect(names.filter((name) => gitPathProblem(`${name}/x`) !== undefined).length).toBeGreaterThan(20);
    expect(
      names.filter((name) => (gitPathProblem(`${name}/x`) !== undefined) !== gitRefuses(`${name}/x`, '100644')),
    ).toEqual([]);
  });

  it.each([
    '.gitmodules',
    '.GITMODULES',
    '.gitmodules.',
    '.gitmodules :x',
    '.gitm\u200codules',
    'gitmod~1',
    'GITMOD~4',
    'gi7eba~1',
    'gi7eb~12',
    '~1234567',
    'dir/.gitmodules',
  ])('refuses %j as a symbolic link, as git does, and accepts it as a file', (name) => {
    expect(gitPathProblem(name, { link: true })).toBe('gitmodules-link');
    expect(gitRefuses(name, '120000')).toBe(true);
    expect(gitPathProblem(name)).toBeUndefined();
  });

  it.each(['.gitattributes', 'gitmod~5', 'gi7eba~12', 'gi7ebb~1', '.gitmodulesx'])(
    'accepts %j as a symbolic link, as git does',
    (name) => {
      expect(gitPathProblem(name, { link: true })).toBeUndefined();
      expect(gitRefuses(name, '120000')).toBe(false);
    },
  );
});

async function tarGz(entries: readonly TarOfEntry[]): Promise<Buffer> {
  return gzipSync(await tarOf(entries));
}

/** What readArchive hands on, or the error it stops with. */
async function read(
  entries: readonly TarOfEntry[],
  links: 'refuse' | 'inside' = 'inside',
): Promise<{ seen: string[]; error?: ArchiveError }> {
  const seen: string[] = [];
  try {
    await readArchive(
      await tarGz(entries),
      { maxBytes: 1 << 20, maxFiles: 100, links },
      {
        async directory(path) {
          seen.push(`${path}/`);
        },
        async file(file, body) {
          for await (const _ of body) {
            // drained
          }
          seen.push(file.path);
        },
        async link(path) {
          seen.push(`${path}@`);
        },
      },
    );
    return { seen };
  } catch (error) {
    if (!(error instanceof ArchiveError)) throw error;
    return { seen, error };
  }
}

const FSMONITOR_CONFIG = '[core]\n\tfsmonitor = "touch /tmp/pwned"\n';

describe('readArchive never hands on a .git entry', () => {
  it.each(DOT_GIT_SPELLINGS.filter((name) => !name.includes('\\') && !name.includes(':')))(
    'refuses the entry %j/config before the visitor sees it',
    async (name) => {
      const { seen, error } = await read([
        { name: 'README.md', data: 'hi' },
        { name: `${name}/config`, data: FSMONITOR_CONFIG },
      ]);
      expect(error?.reason).toBe('git-metadata');
      expect(error?.entry).toBe(`${name}/config`);
      expect(seen).toEqual(['README.md']);
    },
  );

  it('refuses a .git folder entry, a gitfile and one deep in the tree', async () => {
    expect((await read([{ name: '.git/', type: 'directory' }])).error?.reason).toBe('git-metadata');
    expect((await read([{ name: 'skills/a/.git', data: 'gitdir: /home/victim/.git\n' }])).error?.reason).toBe(
      'git-metadata',
    );
    expect((await read([{ name: 'a/b/c/.GIT/hooks/post-checkout', data: '#!/bin/sh\n' }])).error?.reason).toBe(
      'git-metadata',
    );
  });

  it('judges the path written, after stripComponents and select', async () => {
    const archive = await tarGz([
      { name: 'repo-abc/ok.txt', data: '1' },
      { name: 'repo-abc/.git/config', data: FSMONITOR_CONFIG },
    ]);
    const error = await readArchive(
      archive,
      { maxBytes: 1 << 20, maxFiles: 10, stripComponents: 1 },
      {
        async directory() {},
        async file(_f, body) {
          for await (const _ of body);
        },
      },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'git-metadata' });
    const remapped = await readArchive(
      await tarGz([{ name: 'x/config', data: FSMONITOR_CONFIG }]),
      { maxBytes: 1 << 20, maxFiles: 10, select: (path) => path.replace(/^x\//, '.git/') },
      {
        async directory() {},
        async file(_f, body) {
          for await (const _ of body);
        },
      },
    ).catch((e: unknown) => e);
    expect(remapped).toMatchObject({ reason: 'git-metadata' });
  });

  it('refuses a .gitmodules symbolic link and a link into .git, and accepts a .gitmodules file', async () => {
    expect(
      (
        await read([
          { name: 'target', data: '[submodule]' },
          { name: '.gitmodules', type: 'symlink', linkname: 'target' },
        ])
      ).error?.reason,
    ).toBe('git-metadata');
    expect(
      (
        await read([
          { name: 'target', data: '' },
          { name: 'GITMOD~1', type: 'symlink', linkname: 'target' },
        ])
      ).error?.reason,
    ).toBe('git-metadata');
    expect((await read([{ name: 'x', type: 'symlink', linkname: 'sub/.GIT/config' }])).error?.reason).toBe(
      'git-metadata',
    );
    expect(
      await read([
        { name: '.gitmodules', data: '[submodule "a"]\n' },
        { name: '.gitignore', data: 'x\n' },
        { name: '.github/workflows/ci.yml', data: 'on: push\n' },
      ]),
    ).toEqual({
      seen: ['.gitmodules', '.gitignore', '.github/workflows/ci.yml'],
    });
  });
});
