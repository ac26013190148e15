import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { run } from './support/run.js';
import { nativeBound } from '../src/main.js';

const GROUPS = ['cache', 'code', 'skills', 'plugin'];

describe('agentproto', () => {
  it('--version prints the version from package.json', async () => {
    const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it.each([[['--help']], [['-h']], [['help']], [[]]])(
    '%j prints the overview, one line per command, on stdout and exits 0',
    async (argv) => {
      const outcome = await run(argv);
      expect(outcome.code).toBe(0);
      expect(outcome.stderr).toBe('');
      for (const group of GROUPS) expect(outcome.stdout).toMatch(new RegExp(`^  ${group} +\\S`, 'm'));
      expect(outcome.stdout).toContain('--version');
      expect(outcome.stdout).toContain("Run 'agentproto <command> --help'");
    },
  );

  it('an unknown command prints one line and where the usage is, on stderr, and exits 2', async () => {
    const outcome = await run(['frobnicate']);
    expect(outcome).toEqual({
      code: 2,
      stdout: '',
      stderr: `agentproto: unknown command "frobnicate"\nRun 'agentproto --help' for usage.\n`,
    });
  });

  it.each([
    { argv: ['--frobnicate'], message: 'unknown option --frobnicate' },
    { argv: ['cache'], message: 'cache needs a subcommand: put, ls, verify, gc, push or pull' },
    { argv: ['cache', 'frobnicate'], message: 'unknown command "cache frobnicate"' },
    {
      argv: ['cache', 'ls', '--quarantine'],
      message: 'cache ls takes no --quarantine: it is an option of cache verify',
    },
    { argv: ['cache', 'ls', 'extra'], message: 'cache ls takes no arguments, not "extra"' },
    { argv: ['cache', 'gc', '--store'], message: 'cache gc: --store needs a value (DIR)' },
    { argv: ['cache', 'gc', '--store', '--quarantine'], message: 'cache gc: --store needs a value (DIR)' },
    { argv: ['cache', 'gc', '--json=yes'], message: 'cache gc: --json takes no value' },
    { argv: ['cache', 'put'], message: 'cache put takes a folder' },
    { argv: ['cache', 'put', 'a', 'b'], message: 'cache put takes a folder' },
    { argv: ['cache', 'put', 'a', '--name='], message: 'cache put: --name must not be empty' },
    { argv: ['cache', 'verify', '--store='], message: 'cache verify: --store must not be empty' },
    { argv: ['cache', 'verify', '-q'], message: 'cache verify: unknown option -q' },
  ])("a wrong command line exits 2 before doing anything, in the product's words: $argv", async ({ argv, message }) => {
    const outcome = await run(argv);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    const lines = outcome.stderr.split('\n');
    expect(lines[0]).toBe(`agentproto: ${message}`);
    const pointer = [
      'agentproto',
      ...argv.slice(0, 2).filter((word) => ['cache', 'put', 'ls', 'gc', 'verify'].includes(word)),
    ];
    expect(lines.slice(1)).toEqual([`Run '${pointer.join(' ')} --help' for usage.`, '']);
    // node's parser words never reach the user.
    expect(outcome.stderr).not.toMatch(/Unknown option|argument missing|Unexpected argument|ERR_PARSE_ARGS/);
  });
});

describe('nativeBound: the command lines whose own process runs without the optimizing compiler', () => {
  it('is code bundle, wherever --verbose and --json stand', () => {
    expect(nativeBound(['code', 'bundle', 'tool.yaml', '--out', 'tool.tar.gz'])).toBe(true);
    expect(nativeBound(['--verbose', 'code', 'bundle', 'tool.yaml'])).toBe(true);
    expect(nativeBound(['--json', 'code', 'bundle', 'tool.yaml'])).toBe(true);
    expect(nativeBound(['code', '--json', 'bundle', 'tool.yaml'])).toBe(true);
  });

  it('is no other command, and nothing after --', () => {
    expect(nativeBound(['code', 'check', 'tool.yaml'])).toBe(false);
    expect(nativeBound(['code', 'run', 'bundle'])).toBe(false);
    expect(nativeBound(['cache', 'bundle'])).toBe(false);
    expect(nativeBound(['code', '--', 'bundle'])).toBe(false);
    expect(nativeBound(['--', 'code', 'bundle'])).toBe(false);
    expect(nativeBound(['code'])).toBe(false);
    expect(nativeBound([])).toBe(false);
  });

  it('is not code bundle asking for its help, unless the help flag comes after --', () => {
    expect(nativeBound(['code', 'bundle', '--help'])).toBe(false);
    expect(nativeBound(['code', 'bundle', 'tool.yaml', '-h'])).toBe(false);
    expect(nativeBound(['--json', 'code', 'bundle', '--help'])).toBe(false);
    expect(nativeBound(['code', 'bundle', 'tool.yaml', '--', '--help'])).toBe(true);
  });
});
