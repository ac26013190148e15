import { describe, expect, it } from 'vitest';
import { PathError } from '../src/paths/index.js';
import {
  DEFAULT_RUNNERS,
  RunFileMissingError,
  RunResolutionError,
  type RunValue,
  assertRunFileInBundle,
  looksLikeShell,
  parseRun,
  resolveRun,
} from '../src/run/index.js';

const ROOT = '/bundle';

function failure(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error, got none');
}

describe('the file form: the runner is inferred from the extension (seed step 3)', () => {
  it.each([
    ['tool.ts', 'npx', ['--yes', 'tsx', '/bundle/tool.ts']],
    ['tool.tsx', 'npx', ['--yes', 'tsx', '/bundle/tool.tsx']],
    ['tool.mts', 'npx', ['--yes', 'tsx', '/bundle/tool.mts']],
    ['tool.js', 'node', ['/bundle/tool.js']],
    ['tool.mjs', 'node', ['/bundle/tool.mjs']],
    ['tool.cjs', 'node', ['/bundle/tool.cjs']],
    ['workflow.py', 'python', ['/bundle/workflow.py']],
    ['start.sh', 'bash', ['/bundle/start.sh']],
    ['src/index.ts', 'npx', ['--yes', 'tsx', '/bundle/src/index.ts']],
  ])('%j → %s %j', (run, cmd, args) => {
    expect(resolveRun(run, ROOT)).toEqual({ cmd, args, form: 'file', file: run, cwd: ROOT });
  });

  it('uses the canonical bundle path: "./tool.ts" and "lib//x.js" run tool.ts and lib/x.js', () => {
    expect(resolveRun('./tool.ts', ROOT)).toMatchObject({ args: ['--yes', 'tsx', '/bundle/tool.ts'], file: 'tool.ts' });
    expect(resolveRun('lib//x.js', ROOT)).toMatchObject({ args: ['/bundle/lib/x.js'], file: 'lib/x.js' });
  });

  it('joins under the bundle root as written, with or without a trailing slash', () => {
    expect(resolveRun('tool.ts', '/bundle/').args.at(-1)).toBe('/bundle/tool.ts');
    expect(resolveRun('tool.ts', '/srv/x/../bundle').args.at(-1)).toBe('/srv/bundle/tool.ts');
  });

  it('matches extensions exactly: ".TS" has no runner, as Node would not treat ".MJS" as a module either', () => {
    expect(failure(() => resolveRun('TOOL.TS', ROOT))).toMatchObject({ reason: 'unknown-extension', extension: '.TS' });
  });

  it('honours a host runner table', () => {
    const runners = { ...DEFAULT_RUNNERS, '.rb': ['ruby'] as const, '.ts': ['deno', 'run', '-A'] as const };
    expect(resolveRun('tool.rb', ROOT, { runners })).toMatchObject({ cmd: 'ruby', args: ['/bundle/tool.rb'] });
    expect(resolveRun('tool.ts', ROOT, { runners })).toMatchObject({
      cmd: 'deno',
      args: ['run', '-A', '/bundle/tool.ts'],
    });
  });

  it('unquotes a quoted path: "\\"my tool.ts\\"" is the file my tool.ts', () => {
    expect(resolveRun('"my tool.ts"', ROOT)).toMatchObject({
      form: 'file',
      file: 'my tool.ts',
      args: ['--yes', 'tsx', '/bundle/my tool.ts'],
    });
  });

  it('passes the words after a runnable file as its arguments (ADAPTER.md: not shell when the first word is a known file)', () => {
    expect(resolveRun('tool.py --port 8080', ROOT)).toEqual({
      cmd: 'python',
      args: ['/bundle/tool.py', '--port', '8080'],
      form: 'file',
      file: 'tool.py',
      cwd: ROOT,
    });
    expect(resolveRun("deploy.sh 'two words'", ROOT).args).toEqual(['/bundle/deploy.sh', 'two words']);
  });
});

describe('the file form refuses files that are not bundle-internal or not runnable', () => {
  it.each([
    ['../x.js', 'parent'],
    ['/bin/x.js', 'absolute'],
    ['a/../../x.ts', 'parent'],
    ['C:\\x.js', 'drive-letter'],
    ['..\\x.js', 'backslash'],
    ['%2e%2e/x.js', 'percent-encoded'],
    ['../x.js --flag', 'parent'],
  ] as const)('refuses %j with a PathError (%s)', (run, reason) => {
    const error = failure(() => resolveRun(run, ROOT));
    expect(error).toBeInstanceOf(PathError);
    expect(error).toMatchObject({ reason, field: 'run.file', kind: 'bundle' });
  });

  it.each([
    [{ file: '../x' }, 'parent'],
    [{ file: '/etc/passwd.sh' }, 'absolute'],
    [{ file: 'lib/' }, 'trailing-slash'],
    [{ file: '.' }, 'dot'],
  ] as const)('refuses the explicit %j with a PathError (%s)', (run, reason) => {
    expect(failure(() => resolveRun(run, ROOT))).toMatchObject({ name: 'PathError', reason });
  });

  it.each([
    ['tool.rb', '.rb'],
    ['tool.ts.bak', '.bak'],
    ['python', ''],
    ['Makefile', ''],
    ['.env', ''],
    [{ file: 'bin/tool' }, ''],
  ] as const)('refuses %j: unknown extension %j (RunResolutionError naming it)', (run, extension) => {
    const error = failure(() => resolveRun(run, ROOT));
    expect(error).toBeInstanceOf(RunResolutionError);
    expect(error).toMatchObject({ code: 'AIP26_RUN_INVALID', reason: 'unknown-extension', extension });
    expect(error.message).toContain(extension === '' ? 'has no extension' : `unknown extension "${extension}"`);
  });
});

describe('the shell form: bash -c with the string verbatim', () => {
  it.each([
    'npm run build && node dist/tool.js',
    'tail -f /dev/null',
    'a || b',
    'cat x | wc -l',
    'a; b',
    'echo hi > out.txt',
    'wc -l < in.txt',
    'echo `date`',
    'echo $(date)',
    'echo ${HOME}',
    'tool.ts|x',
    'line1\nline2',
    'python -m mytool',
    'my tool.ts',
  ])('%j is a shell command', (run) => {
    expect(resolveRun(run, ROOT)).toEqual({ cmd: 'bash', args: ['-c', run], form: 'shell', cwd: ROOT });
    expect(looksLikeShell(run)).toBe(true);
  });

  it.each(['tool.ts', 'src/index.ts', '"my tool.ts"', 'tool.py --port 8080', '$HOME/x.ts', '*.ts'])(
    '%j is not a shell command',
    (run) => {
      expect(looksLikeShell(run)).toBe(false);
    },
  );
});

describe('the exec form: argv verbatim, no shell', () => {
  it.each([
    [['python', '-m', 'mytool']],
    [['node', '--experimental-vm-modules', 'tool.js']],
    [['python', 'tool.py']],
    [['grep', '', 'file']],
    [['sh', '-c', 'a && b']],
    [['../outside', '/abs']],
  ])('%j', (argv) => {
    const [cmd, ...args] = argv as [string, ...string[]];
    expect(resolveRun(argv, ROOT)).toEqual({ cmd, args, form: 'exec', cwd: ROOT });
    expect(resolveRun({ exec: argv }, ROOT)).toEqual({ cmd, args, form: 'exec', cwd: ROOT });
  });

  it('copies the argv: changing the result does not change the manifest', () => {
    const argv = ['node', 'tool.js'];
    resolveRun(argv, ROOT).args.push('--oops');
    expect(argv).toEqual(['node', 'tool.js']);
  });
});

describe('the explicit object form is honoured whatever the value looks like', () => {
  it.each([
    [
      { file: 'tool.ts' },
      { cmd: 'npx', args: ['--yes', 'tsx', '/bundle/tool.ts'], form: 'file', file: 'tool.ts', cwd: ROOT },
    ],
    [
      { file: 'my tool.ts' },
      { cmd: 'npx', args: ['--yes', 'tsx', '/bundle/my tool.ts'], form: 'file', file: 'my tool.ts', cwd: ROOT },
    ],
    [{ file: 'a&&b.sh' }, { cmd: 'bash', args: ['/bundle/a&&b.sh'], form: 'file', file: 'a&&b.sh', cwd: ROOT }],
    [{ shell: 'tool.ts' }, { cmd: 'bash', args: ['-c', 'tool.ts'], form: 'shell', cwd: ROOT }],
    [
      { shell: 'npm run build && node dist/tool.js' },
      { cmd: 'bash', args: ['-c', 'npm run build && node dist/tool.js'], form: 'shell', cwd: ROOT },
    ],
    [{ exec: ['tool.ts'] }, { cmd: 'tool.ts', args: [], form: 'exec', cwd: ROOT }],
  ] as const)('%j', (run, expected) => {
    expect(resolveRun(run, ROOT)).toEqual(expected);
  });
});

describe('malformed run blocks are refused with RunResolutionError', () => {
  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    [[], 'empty'],
    [[''], 'empty'],
    [{ exec: [] }, 'empty'],
    [{ exec: ['', 'x'] }, 'empty'],
    [{ file: '' }, 'empty'],
    [{ shell: '' }, 'empty'],
    [{ shell: '  ' }, 'empty'],
    ['tool.ts\0', 'nul'],
    [['node', 'a\0b'], 'nul'],
    [{ shell: 'echo \0' }, 'nul'],
    [{ file: 'tool.ts', exec: ['node'] }, 'ambiguous'],
    [{ file: 'tool.ts', shell: 'x' }, 'ambiguous'],
    [{ file: 'a.ts', exec: ['b'], shell: 'c' }, 'ambiguous'],
    [{}, 'invalid-shape'],
    [{ command: 'x' }, 'invalid-shape'],
    [{ file: 5 }, 'invalid-shape'],
    [{ exec: 'node tool.js' }, 'invalid-shape'],
    [{ exec: ['node', 5] }, 'invalid-shape'],
    [{ shell: ['a'] }, 'invalid-shape'],
    [[1, 2], 'invalid-shape'],
    [null, 'invalid-shape'],
    [undefined, 'invalid-shape'],
    [42, 'invalid-shape'],
    ["it's.ts", 'unbalanced-quote'],
    ['"tool.ts', 'unbalanced-quote'],
  ])('%j → %s', (run, reason) => {
    const error = failure(() => resolveRun(run as RunValue, ROOT));
    expect(error).toBeInstanceOf(RunResolutionError);
    expect(error).toMatchObject({ code: 'AIP26_RUN_INVALID', reason });
  });

  it('names both discriminators when there are two', () => {
    expect(failure(() => resolveRun({ file: 'tool.ts', exec: ['node'] } as RunValue, ROOT)).message).toContain(
      'has "file" and "exec"',
    );
  });

  it.each(['', 'a\0b'])('refuses the bundle root %j', (root) => {
    expect(failure(() => resolveRun('tool.ts', root))).toMatchObject({ reason: 'invalid-bundle-root' });
  });
});

describe('the run values of AIP-26 and its EXAMPLES.md', () => {
  it.each([
    [
      'EXAMPLES 1, 3, 5',
      'tool.ts',
      { cmd: 'npx', args: ['--yes', 'tsx', '/bundle/tool.ts'], form: 'file', file: 'tool.ts', cwd: ROOT },
    ],
    ['EXAMPLES 2', ['python', 'tool.py'], { cmd: 'python', args: ['tool.py'], form: 'exec', cwd: ROOT }],
    [
      'EXAMPLES 4, invoice',
      'invoice.ts',
      { cmd: 'npx', args: ['--yes', 'tsx', '/bundle/invoice.ts'], form: 'file', file: 'invoice.ts', cwd: ROOT },
    ],
    [
      'EXAMPLES 4, receipt',
      'receipt.ts',
      { cmd: 'npx', args: ['--yes', 'tsx', '/bundle/receipt.ts'], form: 'file', file: 'receipt.ts', cwd: ROOT },
    ],
    [
      'EXAMPLES 6',
      'reports/quarterly.ts',
      {
        cmd: 'npx',
        args: ['--yes', 'tsx', '/bundle/reports/quarterly.ts'],
        form: 'file',
        file: 'reports/quarterly.ts',
        cwd: ROOT,
      },
    ],
    [
      'spec, file',
      'src/index.ts',
      { cmd: 'npx', args: ['--yes', 'tsx', '/bundle/src/index.ts'], form: 'file', file: 'src/index.ts', cwd: ROOT },
    ],
    [
      'spec, file',
      'workflow.py',
      { cmd: 'python', args: ['/bundle/workflow.py'], form: 'file', file: 'workflow.py', cwd: ROOT },
    ],
    ['spec, exec', ['python', '-m', 'mytool'], { cmd: 'python', args: ['-m', 'mytool'], form: 'exec', cwd: ROOT }],
    [
      'spec, exec',
      ['node', '--experimental-vm-modules', 'tool.js'],
      { cmd: 'node', args: ['--experimental-vm-modules', 'tool.js'], form: 'exec', cwd: ROOT },
    ],
    [
      'spec, shell',
      'npm run build && node dist/tool.js',
      { cmd: 'bash', args: ['-c', 'npm run build && node dist/tool.js'], form: 'shell', cwd: ROOT },
    ],
    ['spec, shell', 'tail -f /dev/null', { cmd: 'bash', args: ['-c', 'tail -f /dev/null'], form: 'shell', cwd: ROOT }],
    [
      'spec, explicit shell',
      { shell: 'npm run build && node dist/tool.js' },
      { cmd: 'bash', args: ['-c', 'npm run build && node dist/tool.js'], form: 'shell', cwd: ROOT },
    ],
    [
      'spec, explicit exec',
      { exec: ['python', '-m', 'mytool'] },
      { cmd: 'python', args: ['-m', 'mytool'], form: 'exec', cwd: ROOT },
    ],
    [
      'spec, explicit file',
      { file: 'tool.ts' },
      { cmd: 'npx', args: ['--yes', 'tsx', '/bundle/tool.ts'], form: 'file', file: 'tool.ts', cwd: ROOT },
    ],
  ] as const)('%s: %j', (_, run, expected) => {
    expect(resolveRun(run as RunValue, ROOT)).toEqual(expected);
  });
});

describe('parseRun reads a run block without a bundle root', () => {
  it.each([
    ['tool.ts', { form: 'file', file: 'tool.ts', args: [] }],
    ['tool.py -v', { form: 'file', file: 'tool.py', args: ['-v'] }],
    [['python', 'x.py'], { form: 'exec', argv: ['python', 'x.py'] }],
    ['a && b', { form: 'shell', command: 'a && b' }],
  ] as const)('%j', (run, parsed) => {
    expect(parseRun(run as RunValue)).toEqual(parsed);
  });
});

describe('assertRunFileInBundle: the run file must be in the bundle', () => {
  const bundle = ['tool.ts', 'lib/base.ts', 'caf\u00e9.py', 'Reports/quarterly.ts', 'lib/'];

  it.each([
    ['tool.ts', 'tool.ts'],
    ['./tool.ts', 'tool.ts'],
    [{ file: 'lib/base.ts' }, 'lib/base.ts'],
    ['cafe\u0301.py', 'caf\u00e9.py'],
    ['tool.ts --flag', 'tool.ts'],
  ] as const)('finds %j as %j', (run, file) => {
    expect(assertRunFileInBundle(run, bundle)).toBe(file);
  });

  it('says nothing about exec and shell forms, whose targets a bundle cannot vouch for', () => {
    expect(assertRunFileInBundle(['python', 'missing.py'], bundle)).toBeUndefined();
    expect(assertRunFileInBundle('node missing.js && x', bundle)).toBeUndefined();
  });

  it('names the missing file', () => {
    const error = failure(() => assertRunFileInBundle('invoice.ts', bundle));
    expect(error).toBeInstanceOf(RunFileMissingError);
    expect(error).toMatchObject({ code: 'AIP26_RUN_FILE_MISSING', file: 'invoice.ts', didYouMean: undefined });
    expect(error.message).toBe('run file "invoice.ts" is not in the bundle');
  });

  it('points at a file that differs only by case', () => {
    expect(failure(() => assertRunFileInBundle('reports/quarterly.ts', bundle))).toMatchObject({
      file: 'reports/quarterly.ts',
      didYouMean: 'Reports/quarterly.ts',
    });
  });

  it('reads the bundle listing once, from any iterable', () => {
    function* files() {
      yield 'a.ts';
      yield 'tool.ts';
    }
    expect(assertRunFileInBundle('tool.ts', files())).toBe('tool.ts');
    expect(() => assertRunFileInBundle('tool.ts', new Set<string>())).toThrow(RunFileMissingError);
  });

  it('still refuses an unsafe run file with a PathError, before looking', () => {
    expect(() => assertRunFileInBundle('../tool.ts', ['../tool.ts'])).toThrow(PathError);
  });
});
