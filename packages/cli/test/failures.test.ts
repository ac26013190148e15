import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportFailure } from '../src/failure.js';
import { CommandError } from '../src/command-error.js';
import { openTerminal } from '../src/terminal.js';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();

/** A folder holding a file `a-file` and a folder `a-folder`. */
async function places(): Promise<{ base: string; file: string; folder: string; missing: string }> {
  const base = await realpath(await scratch());
  await writeFile(join(base, 'a-file'), 'x: 1\n');
  await mkdir(join(base, 'a-folder'));
  return { base, file: join(base, 'a-file'), folder: join(base, 'a-folder'), missing: join(base, 'missing') };
}

describe('path errors say what is wrong, before the command runs', () => {
  it.each([
    [
      'cache put',
      (p: Paths) => ['cache', 'put', p.missing],
      'CLI_PATH_NOT_FOUND',
      'dir',
      'missing',
      'folder does not exist',
    ],
    [
      'cache put',
      (p: Paths) => ['cache', 'put', p.file],
      'CLI_PATH_NOT_A_FOLDER',
      'dir',
      'a-file',
      'is a file, expected a folder',
    ],
    [
      'code check',
      (p: Paths) => ['code', 'check', p.missing],
      'CLI_PATH_NOT_FOUND',
      'manifest',
      'missing',
      'file does not exist',
    ],
    [
      'code check',
      (p: Paths) => ['code', 'check', p.folder],
      'CLI_PATH_NOT_A_FILE',
      'manifest',
      'a-folder',
      'is a folder, expected a file',
    ],
    [
      'code check',
      (p: Paths) => ['code', 'check', p.file, '--workspace', p.file],
      'CLI_PATH_NOT_A_FOLDER',
      '--workspace',
      'a-file',
      'is a file, expected a folder',
    ],
    [
      'code bundle',
      (p: Paths) => ['code', 'bundle', p.file, '--out', join(p.missing, 'b.tgz')],
      'CLI_PATH_NOT_FOUND',
      '--out',
      'missing/b.tgz',
      `its folder ${'{base}'}/missing does not exist`,
    ],
    [
      'code bundle',
      (p: Paths) => ['code', 'bundle', p.file, '--out', p.folder],
      'CLI_PATH_NOT_A_FILE',
      '--out',
      'a-folder',
      'is a folder, expected a file',
    ],
    [
      'skills resolve',
      (p: Paths) => ['skills', 'resolve', p.missing],
      'CLI_PATH_NOT_FOUND',
      'declaration',
      'missing',
      'file does not exist',
    ],
    [
      'skills prepare',
      (p: Paths) => ['skills', 'prepare', p.file, '--vault', p.folder],
      'CLI_PATH_NOT_A_FILE',
      '--vault',
      'a-folder',
      'is a folder, expected a file',
    ],
    [
      'skills prepare',
      (p: Paths) => ['skills', 'prepare', p.file, '--store', join(p.file, 'store')],
      'CLI_PATH_NOT_A_FOLDER',
      '--store',
      'a-file/store',
      `${'{base}'}/a-file is a file, expected a folder`,
    ],
    [
      'plugin build',
      (p: Paths) => ['plugin', 'build', p.folder, '--out', p.missing],
      'CLI_PATH_NOT_A_FILE',
      'config',
      'a-folder',
      'is a folder, expected a file',
    ],
    [
      'plugin build',
      (p: Paths) => ['plugin', 'build', p.file, '--out', p.file],
      'CLI_PATH_NOT_A_FOLDER',
      '--out',
      'a-file',
      'is a file, expected a folder',
    ],
    [
      'plugin validate',
      (p: Paths) => ['plugin', 'validate', p.missing],
      'CLI_PATH_NOT_FOUND',
      'dir',
      'missing',
      'folder does not exist',
    ],
    [
      'plugin verify',
      (p: Paths) => ['plugin', 'verify', p.file, p.file],
      'CLI_PATH_NOT_A_FOLDER',
      'dir',
      'a-file',
      'is a file, expected a folder',
    ],
    [
      'plugin import',
      (p: Paths) => ['plugin', 'import', p.file, '--out', p.missing],
      'CLI_PATH_NOT_A_FOLDER',
      'dir',
      'a-file',
      'is a file, expected a folder',
    ],
    [
      'plugin emit',
      (p: Paths) => ['plugin', 'emit', p.missing, '--out', p.folder],
      'CLI_PATH_NOT_FOUND',
      'config',
      'missing',
      'file does not exist',
    ],
    [
      'plugin push',
      (p: Paths) => ['plugin', 'push', p.missing, 'localhost:1/x:1'],
      'CLI_PATH_NOT_FOUND',
      'dir',
      'missing',
      'folder does not exist',
    ],
    [
      'plugin pull',
      (p: Paths) => ['plugin', 'pull', 'localhost:1/x:1', p.file],
      'CLI_PATH_NOT_A_FOLDER',
      'dir',
      'a-file',
      'is a file, expected a folder',
    ],
  ])('%s: %s', async (_name, argv, code, what, path, problem) => {
    const p = await places();
    const outcome = await run(argv(p));
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toBe(
      `agentproto: ${code}: ${what} ${p.base}/${path}: ${problem.replace('{base}', p.base)}\n`,
    );
    const json = await run([...argv(p), '--json']);
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code, message: `${what} ${p.base}/${path}: ${problem.replace('{base}', p.base)}` },
    });
  });
});

type Paths = Awaited<ReturnType<typeof places>>;

describe('--json failures are one JSON document on stdout, nothing on stderr, the same exit status', () => {
  it('a wrong command line: CLI_USAGE, the help pointer as its hint, and the suggestion', async () => {
    const outcome = await run(['code', 'chek', 'tool.yaml', '--json']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toBe('');
    expect(JSON.parse(outcome.stdout)).toEqual({
      error: {
        code: 'CLI_USAGE',
        message: 'unknown command "code chek"',
        hint: "Run 'agentproto code --help' for usage.",
        suggestion: 'code check',
      },
    });
  });

  it('a library error: its code, message and hint', async () => {
    const { file } = await places();
    const outcome = await run(['cache', 'ls', '--store', file, '--json']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('');
    const { error } = JSON.parse(outcome.stdout) as { error: Record<string, string> };
    expect(error.code).toBe('CACHE_ROOT_UNUSABLE');
    expect(error.hint).toMatch(/^--store must name a folder/);
  });

  it('a failure no library named, and an unexpected one', async () => {
    const { base } = await places();
    await writeFile(join(base, 'tool.yaml'), '- a list\n');
    const command = await run(['code', 'check', join(base, 'tool.yaml'), '--json']);
    expect(command.code).toBe(1);
    expect(command.stderr).toBe('');
    expect(JSON.parse(command.stdout)).toEqual({
      error: { code: 'CLI_COMMAND_FAILED', message: `${join(base, 'tool.yaml')} is not a manifest (a mapping)` },
    });

    let stdout = '';
    let stderr = '';
    const term = openTerminal(
      { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } },
      { json: true, verbose: false },
    );
    expect(reportFailure(new Error('boom at https://user:secret@example.com/x'), term, {})).toBe(1);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual({
      error: {
        code: 'CLI_UNEXPECTED',
        message: 'unexpected error: boom at https://***@example.com/x',
        hint: 'run again with --verbose to see its cause and stack trace',
      },
    });
  });

  it('code bundle --json names the tar.gz it wrote', async () => {
    const { base } = await places();
    await writeFile(join(base, 'tool.js'), 'console.log(1)\n');
    await writeFile(
      join(base, 'tool.yaml'),
      'kind: tool\nname: t\ncode:\n  sources:\n    - local: tool.js\nrun: tool.js\n',
    );
    const outcome = await run(
      ['code', 'bundle', join(base, 'tool.yaml'), '--out', 'ignored.tgz', '--json'].map((arg) =>
        arg === 'ignored.tgz' ? join(base, 'b.tgz') : arg,
      ),
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ out: join(base, 'b.tgz'), files: 1 });
  });
});

describe('parse errors show the offending line and a caret', () => {
  /** A failure printed to a terminal, by reportFailure as main does. */
  function printed(error: unknown, verbose = false): { code: number; stderr: string } {
    let stderr = '';
    const term = openTerminal(
      { stdout: { write: () => undefined }, stderr: { write: (text: string) => (stderr += text) } },
      { json: false, verbose },
    );
    return { code: reportFailure(error, term, {}), stderr };
  }

  it('an excerpt on the error or its cause is printed under the error line, each line printable on its own', () => {
    const syntax = Object.assign(new Error('plugin.toml: is not valid TOML at line 12, column 9'), {
      code: 'DOCUMENT_SYNTAX',
      line: 12,
      column: 9,
      excerpt: '  12 | name = "x\x1b[2J\n     |         ^',
    });
    const error = new CommandError('config /tmp/plugin.toml: is not valid TOML at line 12, column 9', {
      cause: syntax,
    });
    expect(printed(error)).toEqual({
      code: 1,
      stderr:
        'agentproto: config /tmp/plugin.toml: is not valid TOML at line 12, column 9\n  12 | name = "x\\x1b[2J\n     |         ^\n',
    });
    expect(printed(syntax).stderr).not.toContain('\\n');
  });

  it('a CODE.md front matter that does not parse names the file and its line as an editor counts it', async () => {
    const { base } = await places();
    const file = join(base, 'CODE.md');
    await writeFile(file, '---\nschema: code/v2\nsource: [\n---\nbody\n');
    const outcome = await run(['code', 'check', file]);
    expect(outcome.code).toBe(1);
    const [line, excerpt] = outcome.stderr.split('\n');
    expect(line).toContain(file);
    expect(line).toMatch(/line \d+, column \d+/);
    expect(excerpt).toMatch(/^ +\d+ \| /);
    const json = await run(['code', 'check', file, '--json']);
    const { error } = JSON.parse(json.stdout) as { error: { message: string; excerpt: string } };
    expect(error.message).toContain(file);
    expect(error.excerpt.split('\n')).toHaveLength(2);
  });

  it('a real YAML declaration that does not parse names the file, line and column, with its excerpt', async () => {
    const { base } = await places();
    const file = join(base, 'skills.yaml');
    await writeFile(file, 'skills:\n  - a\n  b: [\n');
    const outcome = await run(['skills', 'resolve', file]);
    expect(outcome.code).toBe(1);
    const [line, ...rest] = outcome.stderr.trimEnd().split('\n');
    expect(line).toContain(file);
    expect(line).toMatch(/line \d+, column \d+/);
    expect(outcome.stderr).not.toContain('\\n');
    // The excerpt of the documents package: `  N | text`, then the caret line.
    expect(rest[0]).toMatch(/^ +\d+ \| /);
    expect(rest[1]).toMatch(/^ +\| +\^/);
  });
});
