import { execFile } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const execFileAsync = promisify(execFile);
const scratch = scratchFolders();

/** The script of one shell, as `agentproto completion <shell>` prints it. */
async function script(shell: string): Promise<string> {
  const outcome = await run(['completion', shell]);
  expect(outcome.code).toBe(0);
  expect(outcome.stderr).toBe('');
  return outcome.stdout;
}

/**
 * What bash completes for a command line whose last word is being typed: the script sourced
 * in a real bash, its function called with COMP_WORDS and COMP_CWORD as bash sets them.
 */
async function complete(words: string[], cwd?: string): Promise<string[]> {
  const dir = await scratch();
  const file = join(dir, 'agentproto.bash');
  await writeFile(file, await script('bash'));
  const quoted = words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const { stdout } = await execFileAsync(
    'bash',
    [
      '-c',
      `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _agentproto; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { encoding: 'utf8', ...(cwd === undefined ? {} : { cwd }) },
  );
  return stdout.split('\n').filter(Boolean).sort();
}

describe('agentproto completion bash', () => {
  it('completes the commands, their subcommands and help topics', async () => {
    expect(await complete(['agentproto', 'pl'])).toEqual(['plugin']);
    expect(await complete(['agentproto', 'c'])).toEqual(['cache', 'code', 'completion']);
    expect(await complete(['agentproto', '--v'])).toEqual(['--version']);
    expect(await complete(['agentproto', 'plugin', 'p'])).toEqual(['pull', 'push']);
    expect(await complete(['agentproto', 'help', 'sk'])).toEqual(['skills']);
    expect(await complete(['agentproto', 'help', 'code', 'b'])).toEqual(['bundle']);
  });

  it("offers the subcommand's own options, those the parser takes", async () => {
    expect(await complete(['agentproto', 'cache', 'ls', '--'])).toEqual(['--help', '--json', '--store', '--verbose']);
    expect(await complete(['agentproto', 'cache', 'verify', '--q'])).toEqual(['--quarantine']);
    expect(await complete(['agentproto', 'plugin', 'validate', 'dir', '--s'])).toEqual(['--strict']);
    expect(await complete(['agentproto', 'plugin', 'build', 'plugin.toml', '--r'])).toEqual(['--replace']);
  });

  it('completes folders where a folder goes and files where a file goes', async () => {
    const dir = await realpath(await scratch());
    await mkdir(join(dir, 'pkg-dir'));
    await writeFile(join(dir, 'pkg-file.toml'), '');
    // --out DIR: folders only; a configuration: files (and folders, to walk into).
    expect(await complete(['agentproto', 'plugin', 'build', 'x.toml', '--out', 'pkg'], dir)).toEqual(['pkg-dir']);
    expect(await complete(['agentproto', 'plugin', 'build', 'pkg'], dir)).toEqual(['pkg-dir', 'pkg-file.toml']);
    expect(await complete(['agentproto', 'plugin', 'validate', 'pkg'], dir)).toEqual(['pkg-dir']);
    // The second positional of verify is a folder; the value of --spec is not a path.
    expect(await complete(['agentproto', 'plugin', 'verify', 'a.toml', 'pkg'], dir)).toEqual(['pkg-dir']);
    expect(await complete(['agentproto', 'plugin', 'verify', '--spec', '1.0.0', 'pkg'], dir)).toEqual([
      'pkg-dir',
      'pkg-file.toml',
    ]);
    expect(await complete(['agentproto', 'plugin', 'build', 'x.toml', '--spec', 'pkg'], dir)).toEqual([]);
    // Declarations are one or more: files at every place, and folders to walk into.
    for (const words of [['pkg'], ['a.yaml', 'pkg'], ['a.yaml', '--store', 's', 'b.yaml', 'pkg']])
      expect(await complete(['agentproto', 'skills', 'prepare', ...words], dir)).toEqual(['pkg-dir', 'pkg-file.toml']);
    // A command without a variadic positional offers nothing past its last one.
    expect(await complete(['agentproto', 'plugin', 'validate', 'a', 'pkg'], dir)).toEqual([]);
  });
});

describe('agentproto completion zsh and fish', () => {
  it('zsh runs the same function through its bash layer; bash parses it', async () => {
    const text = await script('zsh');
    expect(text.split('\n')[0]).toBe('#compdef agentproto');
    expect(text).toContain('bashcompinit');
    expect(text).toContain(await script('bash'));
    const dir = await scratch();
    await writeFile(join(dir, 'agentproto.zsh'), text);
    await execFileAsync('bash', ['-n', join(dir, 'agentproto.zsh')]);
  });

  it('fish: one complete line per group, subcommand and option, with descriptions', async () => {
    const lines = (await script('fish')).trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(/^(#|complete -c agentproto )/);
    expect(lines).toContainEqual(expect.stringMatching(/-n __fish_use_subcommand -a plugin -d /));
    expect(lines).toContainEqual(
      expect.stringMatching(/__fish_seen_subcommand_from plugin; and __fish_seen_subcommand_from build' -l out -x /),
    );
    expect(lines.filter((line) => / -l root | -l cache-root | -l cache /.test(line))).toEqual([]);
  });

  it('an unknown shell is a wrong command line that says which there are', async () => {
    const outcome = await run(['completion', 'bsh']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toBe(
      'agentproto: unknown command "completion bsh"\nDid you mean "completion bash"?\nRun \'agentproto completion --help\' for usage.\n',
    );
  });
});
