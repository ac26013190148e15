import { describe, expect, it } from 'vitest';
import { run } from './support/run.js';

/** Each group and the subcommands its help must list. */
const SUBCOMMANDS: Record<string, string[]> = {
  cache: ['put <dir>', 'ls', 'verify', 'gc', 'push', 'pull'],
  code: ['check <manifest>', 'bundle <manifest>', 'run <manifest>'],
  skills: ['resolve <declaration>...', 'prepare <declaration>...', 'lock <declaration>...'],
  plugin: [
    'init [dir]',
    'build <config>',
    'validate <dir>',
    'verify <config> <dir>',
    'import <dir>',
    'emit <config>',
    'explain <code>',
    'push <dir> <ref>',
    'pull <ref> <dir>',
  ],
  completion: ['bash', 'zsh', 'fish'],
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
    [[group, 'frobnicate', '--help']],
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
      const [line, ...rest] = outcome.stderr.split('\n');
      expect(line).toMatch(/^agentproto: \S/);
      const named = argv.length > 2 ? `${group} ${subcommand}` : group;
      expect(rest).toEqual([`Run 'agentproto ${named} --help' for usage.`, '']);
    }
  });
});

describe('agentproto --help', () => {
  it('is the overview: one line per command, a few examples, and where each command tells more', async () => {
    const { stdout } = await run(['--help']);
    const commands = section(stdout, 'Commands:').filter((line) => /^ {2}\S/.test(line));
    expect(commands.map((line) => line.trim().split(/\s+/)[0])).toEqual(GROUPS);
    const examples = section(stdout, 'Examples:');
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) expect(example).toMatch(/^ {2}agentproto /);
    expect(stdout).toContain("Run 'agentproto <command> --help'");
    expect(stdout).toMatch(/Exit status: 0 .*, 1 .*, 2 /);
    // Subcommand options live in the groups' help.
    for (const option of ['--quarantine', '--vault', '--replace', '--store']) expect(stdout).not.toContain(option);
    expect(stdout).toContain("Run 'agentproto <command> --help'");
  });

  it('help of something that is not a command is a wrong command line', async () => {
    expect(await run(['help', 'frobnicate'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `agentproto: no help for "frobnicate": the commands are cache, code, skills, plugin and completion\nRun 'agentproto --help' for usage.\n`,
    });
  });

  it('help plugin build, and help of a subcommand that does not exist', async () => {
    expect(await run(['help', 'plugin', 'build'])).toEqual(await run(['plugin', 'build', '--help']));
    const wrong = await run(['help', 'plugin', 'biuld']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.split('\n').slice(1)).toEqual([
      'Did you mean "help plugin build"?',
      "Run 'agentproto --help' for usage.",
      '',
    ]);
  });

  it('asks for nothing else: --help after a subcommand neither reads nor writes its arguments', async () => {
    const outcome = await run(['cache', 'put', '/nonexistent/folder', '--store', '/nonexistent/root', '--help']);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^Usage: agentproto cache /);
  });

  it('after --, -h and --help are arguments, not options', async () => {
    const outcome = await run(['cache', 'put', '--', '--help']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^agentproto: CLI_PATH_NOT_FOUND: dir \S*\/--help: folder does not exist\n$/);
  });
});

describe.each(
  Object.entries(SUBCOMMANDS).flatMap(([group, subs]) => subs.map((sub) => [group, sub.split(' ')[0]!] as const)),
)('agentproto %s %s --help', (group, sub) => {
  it('shows that subcommand only: its usage, its options and its examples', async () => {
    const outcome = await run([group, sub, '--help']);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe('');
    const { stdout } = outcome;
    expect(stdout.split('\n')[0]).toBe(
      `Usage: agentproto ${group} ${SUBCOMMANDS[group]!.find((line) => line.split(' ')[0] === sub)} [options]`,
    );
    expect(stdout).not.toContain('Subcommands:');
    const examples = section(stdout, 'Examples:');
    expect(examples.length).toBeGreaterThanOrEqual(1);
    for (const example of examples) expect(example).toMatch(new RegExp(`^ {2}agentproto ${group} ${sub}( |$)`));
    expect(section(stdout, 'Options:')).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ {2}--json /), expect.stringMatching(/^ {2}-h, --help /)]),
    );
    // The same with the subcommand's arguments, and through `help`.
    expect(await run([group, sub, 'some-arg', '-h'])).toEqual(outcome);
    expect(await run(['help', group, sub])).toEqual(outcome);
  });

  it('every option it lists is one it takes: the parser accepts each', async () => {
    const { stdout } = await run([group, sub, '--help']);
    const flags = section(stdout, 'Options:')
      .map((line) => /^ {2}(--[a-z-]+)/.exec(line)?.[1])
      .filter((flag) => flag !== undefined);
    const { stdout: groupText } = await run([group, '--help']);
    for (const flag of flags) {
      const outcome = await run([group, sub, flag, '--help']);
      expect(outcome.code, flag).toBe(0);
    }
    // And an option of the group that is not listed is refused.
    const others = section(groupText, 'Options:')
      .map((line) => /^ {2}(--[a-z-]+)/.exec(line)?.[1])
      .filter((flag): flag is string => flag !== undefined && !flags.includes(flag));
    for (const flag of others) {
      const outcome = await run([group, sub, flag, 'x']);
      expect(outcome.code, flag).toBe(2);
      expect(outcome.stderr, flag).toContain(`${group} ${sub} takes no ${flag}: it is an option of ${group} `);
    }
  });
});

describe('help layout', () => {
  const pages = [
    ['--help'],
    ...Object.keys(SUBCOMMANDS).flatMap((group) => [
      [group, '--help'],
      ...SUBCOMMANDS[group]!.map((sub) => [group, sub.split(' ')[0]!, '--help']),
    ]),
  ];

  it.each(pages)(
    '%s %s %s: two aligned columns, wrapped under themselves, no line over 80 characters',
    async (...argv) => {
      const { stdout } = await run(argv);
      for (const line of stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
      for (const heading of ['Commands:', 'Subcommands:', 'Options:']) {
        const lines = section(stdout, heading);
        if (lines.length === 0) continue;
        // The column where descriptions start: after the widest label (up to 26) and two spaces.
        const starts = lines
          .filter((line) => /^ {2}\S/.test(line))
          .map((line) => {
            const match = /^ {2}(\S.*?) {2,}(\S)/.exec(line);
            return match ? line.indexOf(match[2]!, 2 + match[1]!.length) : -1;
          });
        const column = Math.min(...starts.filter((start) => start > 0));
        for (const line of lines) {
          if (/^ {2}\S/.test(line)) {
            const label = /^ {2}(\S+(?: \S+)*)/.exec(line)![1]!;
            if (label.length <= column - 4) expect(line.slice(column - 2, column), line).toBe('  ');
            if (label.length <= column - 4) expect(line[column], line).not.toBe(' ');
          } else expect(line, 'a continuation line').toMatch(new RegExp(`^ {${column}}\\S`));
        }
      }
    },
  );

  it("the default store it shows is the content cache's default", async () => {
    const { defaultCacheRoot } = await import('@agentproto/content-cache');
    const { defaultStoreRoot } = await import('../src/help.js');
    expect(defaultStoreRoot()).toBe(defaultCacheRoot());
    expect(defaultStoreRoot({ XDG_CACHE_HOME: '/x/cache' })).toBe(defaultCacheRoot({ XDG_CACHE_HOME: '/x/cache' }));
    expect(defaultStoreRoot({ XDG_CACHE_HOME: 'relative' })).toBe(defaultCacheRoot({ XDG_CACHE_HOME: 'relative' }));
  });

  it('the --spec values it offers are the versions agent-plugins builds', async () => {
    const { SPEC_VERSIONS } = await import('@agentproto/agent-plugins');
    const { GROUPS } = await import('../src/table.js');
    expect(GROUPS.plugin!.options.spec!.choices).toEqual(SPEC_VERSIONS);
  });
});
