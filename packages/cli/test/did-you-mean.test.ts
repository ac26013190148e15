import { describe, expect, it } from 'vitest';
import { closest } from '../src/suggest.js';
import { run } from './support/run.js';

/** A wrong command line's three lines: the error, what was meant, the help pointer. */
async function wrong(argv: string[]): Promise<string[]> {
  const outcome = await run(argv);
  expect(outcome.code, outcome.stderr).toBe(2);
  expect(outcome.stdout).toBe('');
  return outcome.stderr.trimEnd().split('\n');
}

describe('did you mean', () => {
  it.each([
    [
      ['code', 'chek', 'tool.yaml'],
      'agentproto: unknown command "code chek"',
      '"code check"',
      "Run 'agentproto code --help' for usage.",
    ],
    [['plugins', 'build'], 'agentproto: unknown command "plugins"', '"plugin"', "Run 'agentproto --help' for usage."],
    [['versoin'], 'agentproto: unknown command "versoin"', '"--version"', "Run 'agentproto --help' for usage."],
    [['--verison'], 'agentproto: unknown option --verison', '"--version"', "Run 'agentproto --help' for usage."],
    [
      ['cache', 'ls', '--jsno'],
      'agentproto: cache ls: unknown option --jsno',
      '"--json"',
      "Run 'agentproto cache ls --help' for usage.",
    ],
    [
      ['plugin', 'valdiate', 'x'],
      'agentproto: unknown command "plugin valdiate"',
      '"plugin validate"',
      "Run 'agentproto plugin --help' for usage.",
    ],
    [
      ['cache', 'verify', '--quarantien'],
      'agentproto: cache verify: unknown option --quarantien',
      '"--quarantine"',
      "Run 'agentproto cache verify --help' for usage.",
    ],
    [
      ['plugin', 'build', 'a.toml', '--out', 'x', '--spec', '1.1'],
      'agentproto: plugin build: --spec must be one of 1.0.0, 1.1.0, not "1.1"',
      '"--spec 1.1.0"',
      "Run 'agentproto plugin build --help' for usage.",
    ],
    [
      ['help', 'plugn'],
      'agentproto: no help for "plugn": the commands are cache, code, skills, plugin and completion',
      '"help plugin"',
      "Run 'agentproto --help' for usage.",
    ],
  ])('%j', async (argv, line, meant, pointer) => {
    expect(await wrong(argv)).toEqual([line, `Did you mean ${meant}?`, pointer]);
  });

  it('an option of another subcommand names the subcommands that take it', async () => {
    expect(await wrong(['plugin', 'validate', 'dir', '--out', 'x'])).toEqual([
      'agentproto: plugin validate takes no --out: it is an option of plugin build, import and emit',
      "Run 'agentproto plugin validate --help' for usage.",
    ]);
    expect(await wrong(['code', 'check', 'tool.yaml', '--env', 'A=1'])).toEqual([
      'agentproto: code check takes no --env: it is an option of code run',
      "Run 'agentproto code check --help' for usage.",
    ]);
  });

  it('nothing far from every word is suggested', async () => {
    expect(await wrong(['frobnicate'])).toEqual([
      'agentproto: unknown command "frobnicate"',
      "Run 'agentproto --help' for usage.",
    ]);
    expect(await wrong(['cache', 'ls', '--zzz'])).toEqual([
      'agentproto: cache ls: unknown option --zzz',
      "Run 'agentproto cache ls --help' for usage.",
    ]);
  });

  it.each([
    [['cache', 'ls', '--root', 'x'], 'cache ls: --root is now --store'],
    [['code', 'check', 'tool.yaml', '--cache-root', 'x'], 'code check: --cache-root is now --store'],
    [['skills', 'prepare', 'skills.yaml', '--cache', 'x'], 'skills prepare: --cache is now --store'],
    [['cache', 'gc', '--root=x'], 'cache gc: --root is now --store'],
  ])('the old store flags are a wrong command line naming --store: %j', async (argv, message) => {
    const [line] = await wrong(argv);
    expect(line).toBe(`agentproto: ${message}`);
  });

  it('a swap of neighbours (two edits) still finds the word, as do one-edit typos', () => {
    expect(closest('jsno', ['json', 'verbose', 'store'])).toBe('json');
    expect(closest('chek', ['check', 'bundle', 'run'])).toBe('check');
    expect(closest('versoin', ['cache', 'code', 'version'])).toBe('version');
    expect(closest('pulgin', ['cache', 'plugin', 'skills'])).toBe('plugin');
    expect(closest('VERIFY', ['verify'])).toBe('verify');
    expect(closest('bild', ['build', 'validate'])).toBe('build');
    expect(closest('valid', ['build', 'validate'])).toBe('validate');
    expect(closest('x', ['ls', 'gc'])).toBeUndefined();
    expect(closest('zzzz', ['push', 'pull'])).toBeUndefined();
  });
});

describe('node parser errors never reach the user', () => {
  it.each([
    [['cache', 'ls', '--nope'], 'cache ls: unknown option --nope'],
    [['cache', 'ls', '-n'], 'cache ls: unknown option -n'],
    [['code', 'check', 'tool.yaml', '--workspace'], 'code check: --workspace needs a value (DIR)'],
    [['code', 'check', 'tool.yaml', '--workspace', '--store', 'x'], 'code check: --workspace needs a value (DIR)'],
    [['cache', 'verify', '--quarantine=yes'], 'cache verify: --quarantine takes no value'],
    [['cache', 'ls', 'stray'], 'cache ls takes no arguments, not "stray"'],
    [['plugin', 'push', 'dir'], 'plugin push takes a plugin folder and a reference (host[:port]/repository:tag)'],
  ])('%j', async (argv, message) => {
    const outcome = await run(argv);
    expect(outcome.code).toBe(2);
    const [line] = outcome.stderr.split('\n');
    expect(line).toBe(`agentproto: ${message}`);
    expect(outcome.stderr).not.toMatch(/Unknown option|argument missing|Unexpected argument|ambiguous|ERR_PARSE_ARGS/);
  });
});
