import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PathError } from '../src/paths/index.js';
import { DEFAULT_RUNNERS, RunResolutionError, type RunValue, resolveRun } from '../src/run/index.js';

const ROOT = '/srv/bundle';
const METACHARACTERS = ['&&', '||', '|', ';', '>', '<', '`', '$(', '${'] as const;
const EXTENSIONS = Object.keys(DEFAULT_RUNNERS);

// Names of safe paths: no metacharacter, whitespace, quote, backslash, control, `%`, `/`.
const nameChar = fc.oneof(
  fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.+=@,~#!'.split('')),
  fc.constantFrom('\u00e9', 'e\u0301', '\u00df', '\u4e2d', '\u{1f600}'),
);
const name = fc.string({ unit: nameChar, minLength: 1, maxLength: 12 }).filter((s) => s !== '.' && s !== '..');
const safeFile = fc
  .tuple(fc.array(name, { maxLength: 4 }), name, fc.constantFrom(...EXTENSIONS), fc.constantFrom('', './'))
  .map(([folders, base, ext, lead]) => lead + [...folders, base + ext].join('/'));

const noNul = (s: string) => !s.includes('\0');

describe('resolveRun, for all inputs', () => {
  it('runs a plain safe file path with the runner of its extension, under the bundle root', () => {
    fc.assert(
      fc.property(safeFile, (file) => {
        const resolved = resolveRun(file, ROOT);
        const canonical = file.replace(/^\.\//, '').normalize('NFC');
        const [cmd, ...prefix] = DEFAULT_RUNNERS[posix.extname(canonical)]!;
        expect(resolved).toEqual({
          cmd,
          args: [...prefix, `${ROOT}/${canonical}`],
          form: 'file',
          file: canonical,
          cwd: ROOT,
        });
      }),
      { numRuns: 3000 },
    );
  });

  it('runs any string holding a shell metacharacter with bash -c, verbatim', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...METACHARACTERS), fc.string(), (before, meta, after) => {
        const command = before + meta + after;
        fc.pre(noNul(command));
        expect(resolveRun(command, ROOT)).toEqual({ cmd: 'bash', args: ['-c', command], form: 'shell', cwd: ROOT });
        expect(resolveRun({ shell: command }, ROOT)).toEqual({
          cmd: 'bash',
          args: ['-c', command],
          form: 'shell',
          cwd: ROOT,
        });
      }),
      { numRuns: 3000 },
    );
  });

  it('passes an exec array through verbatim', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }).filter(noNul), fc.array(fc.string().filter(noNul)), (cmd, args) => {
        expect(resolveRun([cmd, ...args], ROOT)).toEqual({ cmd, args, form: 'exec', cwd: ROOT });
        expect(resolveRun({ exec: [cmd, ...args] }, ROOT)).toEqual({ cmd, args, form: 'exec', cwd: ROOT });
      }),
      { numRuns: 2000 },
    );
  });

  it('never returns a file outside the bundle root, and fails only with RunResolutionError or PathError', () => {
    const hostile = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc
        .array(
          fc.constantFrom(
            '..',
            '.',
            '/',
            '\\',
            'a',
            'x.ts',
            '.js',
            ' ',
            '"',
            "'",
            '%2e',
            'C:',
            '\0',
            '\n',
            '&&',
            ' --x',
          ),
          { maxLength: 10 },
        )
        .map((parts) => parts.join('')),
    );
    const run = fc.oneof(
      hostile,
      hostile.map((file) => ({ file })),
      hostile.map((shell) => ({ shell })),
      fc.array(hostile, { maxLength: 3 }),
    );
    fc.assert(
      fc.property(run, (value) => {
        let resolved;
        try {
          resolved = resolveRun(value as RunValue, ROOT);
        } catch (error) {
          expect(error instanceof RunResolutionError || error instanceof PathError).toBe(true);
          return;
        }
        if (resolved.form !== 'file') return;
        const target = resolved.args.find((a) => a === `${ROOT}/${resolved.file}`);
        expect(target).toBeDefined();
        expect(posix.resolve(ROOT, resolved.file!).startsWith(`${ROOT}/`)).toBe(true);
        expect(posix.resolve(target!).startsWith(`${ROOT}/`)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });
});
