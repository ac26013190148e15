import { execFileSync } from 'node:child_process';
import { mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredTree } from '@agentproto/content-cache';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { printable, shellQuote } from '../src/format.js';
import { run, runJson } from './support/run.js';
import { scratchFolders, writeSampleSkill } from './support/scratch.js';

const scratch = scratchFolders();

/** What bash makes of each word: the words printed NUL-separated, read back. */
function bashWords(words: string[]): string[] {
  const script = `printf '%s\\0' ${words.join(' ')}`;
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', script], {
    env: { LC_ALL: 'C.UTF-8', PATH: process.env.PATH },
    encoding: 'utf8',
  });
  return out.split('\0').slice(0, -1);
}

describe('shellQuote', () => {
  it.each([
    ['/tmp/agentproto-cli-a1/hello', '/tmp/agentproto-cli-a1/hello'],
    ['/home/zoë/skills/review', '/home/zoë/skills/review'],
    ['skills/review/SKILL.md#/name', 'skills/review/SKILL.md#/name'],
    ['a=b,c:d@e%f+g', 'a=b,c:d@e%f+g'],
    ['/tmp/dir with space', "'/tmp/dir with space'"],
    ["it's here", "'it'\\''s here'"],
    ["'", "\\'"],
    ['$HOME', "'$HOME'"],
    ['a`b`', "'a`b`'"],
    ['*.md', "'*.md'"],
    ['#comment', "'#comment'"],
    ['=cmd', "'=cmd'"],
    ['~/x', "'~/x'"],
    ['', "''"],
    ['a\nb', "'a'$'\\n''b'"],
    ['\x1b[31mred', "$'\\x1b''[31mred'"],
    ['abc\u202Egpj.exe', "'abc'$'\\u202e''gpj.exe'"],
    ['\u0085', "$'\\u0085'"],
  ])('%j is printed as %s', (path, quoted) => {
    expect(shellQuote(path)).toBe(quoted);
  });

  it('bash reads every quoted path back as the path', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({
            unit: fc.oneof(
              fc.constantFrom(
                "'",
                '"',
                ' ',
                '\\',
                '$',
                '\n',
                '\t',
                '\x1b',
                '\x7f',
                '\u202e',
                '\u00a0',
                '!',
                '*',
                '#',
                '~',
                '=',
              ),
              fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
            ),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        (paths) => {
          const words = paths.map((path) => path.replaceAll('\0', ''));
          expect(bashWords(words.map(shellQuote))).toEqual(words);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('leaves a path unquoted exactly when every character is a letter, mark or digit of any script, or one of _ @ % + = : , . / - and # (= and # not first)', () => {
    const safe = /^[\p{L}\p{M}\p{N}_@%+:,./-][\p{L}\p{M}\p{N}_@%+=:,./#-]*$/u;
    const plain = (path: string) => shellQuote(path) === path;
    // Every ASCII character, and some beyond it, alone, first and after a plain start.
    const characters = [
      ...Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)),
      'é',
      'Ж',
      '٣',
      '\u0301',
      'ｱ',
      '\u00a0',
      '\u202e',
    ];
    for (const character of characters)
      for (const path of [character, `${character}a`, `a${character}`, `a/${character}b`])
        expect(plain(path), JSON.stringify(path)).toBe(safe.test(path));
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...characters), { maxLength: 8 }), (parts) => {
        const path = parts.join('');
        expect(plain(path)).toBe(safe.test(path));
      }),
    );
  });

  it('never lets a control character through, quoted or not', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(shellQuote(text)).not.toMatch(/[\p{Cc}\p{Cf}]/u);
        expect(printable(text)).not.toMatch(/[\p{Cc}\p{Cf}]/u);
      }),
    );
  });
});

describe('paths in human output', () => {
  it('cache put "dir with \'quote\'" prints its paths shell-quoted; --json prints them as they are', async () => {
    const base = await realpath(await scratch());
    const folder = await writeSampleSkill(join(base, "dir with 'quote'"));
    const root = join(base, 'store $HOME');
    const outcome = await run(['cache', 'put', folder, '--store', root]);
    expect(outcome.code).toBe(0);
    const tree = await runJson<StoredTree>(['cache', 'put', folder, '--store', root]);
    expect(tree.path.startsWith(root)).toBe(true);
    expect(outcome.stdout).toContain(`\npath       ${shellQuote(tree.path)}\n`);
    expect(outcome.stdout).toContain(`\nlinkPath   ${shellQuote(tree.linkPath)}\n`);
    expect(shellQuote(tree.path)).toBe(`'${tree.path}'`);
    const ls = await run(['cache', 'ls', '--store', root]);
    expect(ls.stdout.trimEnd().split('\n').at(-1)).toBe(`1 object, 1 key, 1 link in '${root}'`);
    // Pasted into a shell, the printed path is the path.
    expect(bashWords([shellQuote(tree.path)])).toEqual([tree.path]);
  });

  it('a missing folder named with a quote is named shell-quoted in the error', async () => {
    const base = await realpath(await scratch());
    await mkdir(join(base, 'store'));
    const outcome = await run(['cache', 'put', join(base, "it's gone"), '--store', join(base, 'store')]);
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: `agentproto: CLI_PATH_NOT_FOUND: dir '${base}/it'\\''s gone': folder does not exist\n`,
    });
  });
});
