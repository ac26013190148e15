import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { run } from './support/run.js';

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
    { argv: ['cache'], message: 'cache needs a subcommand' },
    { argv: ['cache', 'frobnicate'], message: 'unknown command "cache frobnicate"' },
    { argv: ['cache', 'ls', '--quarantine'], message: "cache ls: Unknown option '--quarantine'" },
    { argv: ['cache', 'ls', 'extra'], message: 'cache ls: Unexpected argument' },
    { argv: ['cache', 'gc', '--root'], message: "cache gc: Option '--root <value>' argument missing" },
    { argv: ['cache', 'put'], message: 'cache put takes exactly one folder' },
    { argv: ['cache', 'put', 'a', 'b'], message: 'cache put takes exactly one folder' },
    { argv: ['cache', 'put', 'a', '--name='], message: '--name must not be empty' },
    { argv: ['cache', 'verify', '--root='], message: '--root must not be empty' },
  ])('a wrong command line exits 2 before doing anything: $argv', async ({ argv, message }) => {
    const outcome = await run(argv);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    const lines = outcome.stderr.split('\n');
    expect(lines[0]).toContain(`agentproto: ${message}`);
    expect(lines.slice(1)).toEqual([
      argv[0] === 'cache' ? "Run 'agentproto cache --help' for usage." : "Run 'agentproto --help' for usage.",
      '',
    ]);
  });
});
