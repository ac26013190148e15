// The zsh and fish scripts run in the real shells (Debian's zsh and fish; the test command
// installs them like the other system packages), not only parsed.
import { execFile } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const execFileAsync = promisify(execFile);
const scratch = scratchFolders();

async function scriptFile(shell: 'zsh' | 'fish'): Promise<string> {
  const outcome = await run(['completion', shell]);
  expect(outcome.code).toBe(0);
  const file = join(await scratch(), `agentproto.${shell}`);
  await writeFile(file, outcome.stdout);
  return file;
}

/** What fish offers for a command line, as `complete -C` lists it: the candidates, without descriptions. */
async function fishComplete(line: string, cwd?: string): Promise<string[]> {
  const file = await scriptFile('fish');
  const { stdout } = await execFileAsync(
    'fish',
    ['--no-config', '-c', `source '${file}'; complete -C '${line.replace(/'/g, "\\'")}'`],
    { encoding: 'utf8', ...(cwd === undefined ? {} : { cwd }) },
  );
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((entry) => entry.split('\t')[0] ?? '')
    .sort();
}

/**
 * What zsh's completion system gets from the script: compinit and bashcompinit loaded as a
 * user's .zshrc does, the script sourced, then the function registered for `agentproto`
 * called as `_bash_complete` calls it (ksharrays, COMP_WORDS and COMP_CWORD set). zsh then
 * matches the candidates against the word being typed itself.
 */
async function zshCandidates(words: string[]): Promise<{ registered: string; candidates: string[] }> {
  const file = await scriptFile('zsh');
  const quoted = words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const { stdout } = await execFileAsync(
    'zsh',
    [
      '-f',
      '-c',
      [
        'autoload -U compinit && compinit -u -D',
        `source '${file}'`,
        'print -r -- "REGISTERED:${_comps[agentproto]}"',
        'setopt ksharrays',
        `COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}`,
        '_agentproto',
        'print -rl -- "${COMPREPLY[@]}"',
      ].join('\n'),
    ],
    { encoding: 'utf8' },
  );
  const [first = '', ...rest] = stdout.split('\n');
  return { registered: first.replace(/^REGISTERED:/, ''), candidates: rest.filter(Boolean).sort() };
}

describe('agentproto completion fish, in fish', () => {
  it('completes commands, subcommands and the options of the subcommand typed', async () => {
    expect(await fishComplete('agentproto pl')).toEqual(['plugin']);
    expect(await fishComplete('agentproto plugin bu')).toEqual(['build']);
    expect(await fishComplete('agentproto cache ls --')).toEqual(['--json', '--store', '--verbose']);
    expect(await fishComplete('agentproto cache verify --q')).toEqual(['--quarantine']);
    // Options of another subcommand are not offered.
    expect(await fishComplete('agentproto cache ls --q')).toEqual([]);
  });

  it("completes folders after an option that takes a folder, files for a subcommand's path argument", async () => {
    const dir = await realpath(await scratch());
    await mkdir(join(dir, 'pkg-dir'));
    await writeFile(join(dir, 'pkg-file.toml'), '');
    expect(await fishComplete('agentproto plugin build x.toml --out pkg', dir)).toEqual(['pkg-dir/']);
    expect(await fishComplete('agentproto plugin build pkg', dir)).toEqual(['pkg-dir/', 'pkg-file.toml']);
  });
});

describe('agentproto completion zsh, in zsh', () => {
  it('registers itself for agentproto through bashcompinit and offers the same candidates', async () => {
    const subcommands = await zshCandidates(['agentproto', 'plugin', 'bu']);
    expect(subcommands.registered).toBe('_bash_complete -o filenames -F _agentproto');
    expect(subcommands.candidates).toContain('build');
    expect(subcommands.candidates).not.toContain('cache');
    const options = await zshCandidates(['agentproto', 'cache', 'ls', '--']);
    expect(options.candidates).toEqual(['--help', '--json', '--store', '--verbose']);
  });
});
