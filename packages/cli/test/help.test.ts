import { describe, expect, it } from 'vitest';
import { run } from './support/run.js';

/** Each group and the subcommands its help must list. */
const SUBCOMMANDS: Record<string, string[]> = {
  cache: ['put <dir>', 'ls', 'verify', 'gc', 'push', 'pull'],
  code: ['check <manifest>', 'bundle <manifest>', 'run <manifest>'],
  skills: ['resolve <declaration>', 'prepare <declaration>'],
  plugin: [
    'build <config>',
    'validate <dir>',
    'verify <config> <dir>',
    'import <dir>',
    'emit <config>',
    'explain <code>',
    'push <dir> <ref>',
    'pull <ref> <dir>',
  ],
};
const GROUPS = Object.keys(SUBCOMMANDS);

/** A help text's section: the lines after its heading, up to the next blank line. */
function section(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) return [];
  const end = lines.indexOf('', start);
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

describe.each(GROUPS)('agentproto %s --help', (group) => {
  const subcommand = SUBCOMMANDS[group]![0]!.split(' ')[0]!;

  it.each([
    [[group, '--help']],
    [[group, '-h']],
    [['help', group]],
    [['--help', group]],
    [[group, subcommand, '--help']],
    [[group, subcommand, 'some-arg', '-h']],
  ])('%j prints the group help on stdout and exits 0', async (argv) => {
    const outcome = await run(argv);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout.split('\n')[0]).toMatch(new RegExp(`^Usage: agentproto ${group} `));
    expect(outcome).toEqual(await run([group, '--help']));
  });

  it('lists its subcommands and options, and none of another group', async () => {
    const { stdout } = await run([group, '--help']);
    const listed = section(stdout, 'Subcommands:');
    for (const sub of SUBCOMMANDS[group]!)
      expect(
        listed.some((line) => line.startsWith(`  ${sub} `)),
        sub,
      ).toBe(true);
    expect(section(stdout, 'Options:')).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ {2}--json /),
        expect.stringMatching(/^ {2}--verbose /),
        expect.stringMatching(/^ {2}-h, --help /),
      ]),
    );
    for (const other of GROUPS.filter((g) => g !== group)) expect(stdout).not.toContain(`agentproto ${other} `);
  });

  it('shows two to four examples, each a subcommand of the group', async () => {
    const { stdout } = await run([group, '--help']);
    const examples = section(stdout, 'Examples:');
    expect(examples.length).toBeGreaterThanOrEqual(2);
    expect(examples.length).toBeLessThanOrEqual(4);
    const names = SUBCOMMANDS[group]!.map((sub) => sub.split(' ')[0]);
    for (const example of examples) {
      const [program, named, sub] = example.trim().split(/\s+/);
      expect([program, named]).toEqual(['agentproto', group]);
      expect(names).toContain(sub);
    }
  });

  it('documents the exit statuses 0, 1 and 2', async () => {
    const { stdout } = await run([group, '--help']);
    const statuses = section(stdout, 'Exit status:').filter((line) => /^ {2}\d /.test(line));
    expect(statuses.map((line) => line.trim()[0])).toEqual(['0', '1', '2']);
  });

  it('a wrong command line is one line and a pointer to this help on stderr, exit 2', async () => {
    for (const argv of [
      [group, 'frobnicate'],
      [group, subcommand, '--frobnicate'],
    ]) {
      const outcome = await run(argv);
      expect(outcome.code).toBe(2);
      expect(outcome.stdout).toBe('');
      const lines = outcome.stderr.split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^agentproto: \S/);
      expect(lines[1]).toBe(`Run 'agentproto ${group} --help' for usage.`);
    }
  });
});

describe('agentproto --help', () => {
  it('is the overview: one line per command, a few examples, and where each command tells more', async () => {
    const { stdout } = await run(['--help']);
    expect(section(stdout, 'Commands:').map((line) => line.trim().split(/\s+/)[0])).toEqual(GROUPS);
    const examples = section(stdout, 'Examples:');
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) expect(example).toMatch(/^ {2}agentproto /);
    expect(stdout).toContain("Run 'agentproto <command> --help'");
    expect(stdout).toMatch(/Exit status: 0 .*, 1 .*, 2 /);
    // Subcommand options live in the groups' help.
    for (const option of ['--quarantine', '--vault', '--replace', '--cache-root']) expect(stdout).not.toContain(option);
  });

  it('help of something that is not a command is a wrong command line', async () => {
    expect(await run(['help', 'frobnicate'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `agentproto: no help for "frobnicate": the commands are cache, code, skills and plugin\nRun 'agentproto --help' for usage.\n`,
    });
  });

  it('asks for nothing else: --help after a subcommand neither reads nor writes its arguments', async () => {
    const outcome = await run(['cache', 'put', '/nonexistent/folder', '--root', '/nonexistent/root', '--help']);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^Usage: agentproto cache /);
  });

  it('after --, -h and --help are arguments, not options', async () => {
    const outcome = await run(['cache', 'put', '--', '--help']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^agentproto: cache put: \S*\/--help is not a folder\n$/);
  });
});
