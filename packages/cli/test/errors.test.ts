import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serveSkillsForFile } from './support/skills-server.js';
import { describe, expect, it } from 'vitest';
import { main } from '../src/index.js';
import { run } from './support/run.js';
import { scratchFolders, writeSampleSkill } from './support/scratch.js';

const scratch = scratchFolders();

const PASSWORD = 'canary-errors-password-5521';
const skillsRepo = serveSkillsForFile({ auth: { username: 'bot', password: PASSWORD } });

/** A plugin project whose configuration cannot be read: PLUGIN_CONFIG_INVALID, caused by ENOENT. */
/** A configuration that does not parse: its error has a cause chain to show. */
async function brokenConfig(): Promise<{ config: string; out: string }> {
  const base = await scratch();
  await writeFile(join(base, 'plugin.toml'), 'name = "x\n');
  return { config: join(base, 'plugin.toml'), out: join(base, 'out') };
}

describe('an error is one line, then a hint when one helps', () => {
  it('CACHE_ROOT_IN_WORKSPACE: choose a --store outside the folder', async () => {
    const skill = await writeSampleSkill(join(await realpath(await scratch()), 'hello'));
    const outcome = await run(['cache', 'put', skill, '--store', join(skill, 'store')]);
    expect(outcome.code).toBe(1);
    const [line, hint, end] = outcome.stderr.split('\n');
    expect(line).toMatch(/^agentproto: CACHE_ROOT_IN_WORKSPACE: cache root .*\/hello\/store: /);
    expect(hint).toBe('hint: choose a --store outside the folder being stored (the default store is)');
    expect(end).toBe('');
  });

  it('CACHE_ROOT_UNUSABLE names the store option, --store in every command', async () => {
    const base = await scratch();
    const file = join(base, 'a-file');
    await writeFile(file, '');
    await writeFile(join(base, 'skills.json'), JSON.stringify([`${skillsRepo.url}@v1#skills/review`]));
    const cache = await run(['cache', 'ls', '--store', file]);
    expect(cache.stderr).toMatch(/\nhint: --store must name a folder you can write to/);
    const skills = await run(['skills', 'prepare', join(base, 'skills.json'), '--store', file]);
    expect(skills.code).toBe(1);
    expect(skills.stderr).toMatch(/^agentproto: CACHE_ROOT_UNUSABLE: .*\nhint: --store must name a folder/);
  });

  it('PLUGIN_WRITE_FAILED for a non-empty --out: pass --replace', async () => {
    const base = await scratch();
    await mkdir(join(base, 'skills/review'), { recursive: true });
    await writeFile(join(base, 'skills/review/SKILL.md'), '---\nname: review\ndescription: Reviews.\n---\n');
    await writeFile(
      join(base, 'plugin.toml'),
      '[plugin]\nname = "acme.tools"\nversion = "1.0.0"\ndescription = "Acme."\n',
    );
    await mkdir(join(base, 'out'));
    await writeFile(join(base, 'out/keep.txt'), 'mine');
    const outcome = await run(['plugin', 'build', join(base, 'plugin.toml'), '--out', join(base, 'out')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(
      /^agentproto: PLUGIN_WRITE_FAILED: .*\nhint: pass --replace to replace the folder, or choose a new --out\n$/,
    );
  });

  it('SKILL_AUTH_FAILED: check --vault; the password is never printed, not even with --verbose', async () => {
    const dir = await scratch();
    const declaration = join(dir, 'skills.json');
    await writeFile(declaration, JSON.stringify([`${skillsRepo.url}#skills/review`]));
    const vault = join(dir, 'vault.json');
    await writeFile(
      vault,
      JSON.stringify({ [skillsRepo.url]: { username: 'bot', passwordEnv: 'AGENTPROTO_ERRORS_TEST_PASSWORD' } }),
    );
    process.env.AGENTPROTO_ERRORS_TEST_PASSWORD = `${PASSWORD}-wrong`;
    try {
      for (const verbose of [[], ['--verbose']]) {
        const outcome = await run([
          'skills',
          'prepare',
          declaration,
          '--store',
          join(dir, 'cache'),
          '--vault',
          vault,
          ...verbose,
        ]);
        expect(outcome.code).toBe(1);
        expect(outcome.stderr).toMatch(/^agentproto: SKILL_AUTH_FAILED: skill #0 "review"/);
        expect(outcome.stderr).toMatch(/\nhint: check the --vault entry for this URL .*\n$/);
        expect(`${outcome.stdout}${outcome.stderr}`).not.toContain(PASSWORD);
        expect(outcome.stderr.includes('  cause: ')).toBe(verbose.length > 0);
        if (verbose.length > 0)
          expect(outcome.stderr).toMatch(/^ {2}cause: \w+ GIT_AUTH_FAILED: authentication failed for /m);
      }
    } finally {
      delete process.env.AGENTPROTO_ERRORS_TEST_PASSWORD;
    }
  });

  it('a URL holding a password is refused without showing it, with --verbose too', async () => {
    const dir = await scratch();
    const declaration = join(dir, 'skills.json');
    await writeFile(declaration, JSON.stringify(['https://user:secret-pw@example.com/r.git#skills/a']));
    const outcome = await run(['skills', 'resolve', declaration, '--store', join(dir, 'cache'), '--verbose']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(
      /^agentproto: SKILL_URL_HAS_CREDENTIALS: .*\n( {2}cause: .*\n)*hint: remove the user and password from the URL/,
    );
    expect(outcome.stderr).not.toContain('secret-pw');
  });

  it('a name with control characters never reaches the terminal raw', async () => {
    const base = await realpath(await scratch());
    const outcome = await run(['cache', 'put', join(base, 'evil\x1b[2J\nname'), '--store', join(base, 'store')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe(
      `agentproto: CLI_PATH_NOT_FOUND: dir '${base}/evil'$'\\x1b''[2J'$'\\n''name': folder does not exist\n`,
    );
  });
});

describe('--verbose', () => {
  it.each([[['--verbose', 'plugin', 'build']], [['plugin', '--verbose', 'build']], [['plugin', 'build', '--verbose']]])(
    '%j, anywhere on the line, adds the cause chain: each cause with its name, code and message',
    async (prefix) => {
      const { config, out } = await brokenConfig();
      const outcome = await run([...prefix, config, '--out', out]);
      expect(outcome.code).toBe(1);
      const lines = outcome.stderr.split('\n');
      expect(lines[0]).toMatch(new RegExp(`^agentproto: PLUGIN_CONFIG_INVALID: ${config}: `));
      expect(lines).toContainEqual(expect.stringMatching(/^ {2}cause: DocumentSyntaxError DOCUMENT_SYNTAX: /));
    },
  );

  it('without it, the error is its line alone', async () => {
    const { config, out } = await brokenConfig();
    const outcome = await run(['plugin', 'build', config, '--out', out]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(new RegExp(`^agentproto: PLUGIN_CONFIG_INVALID: ${config}: `));
    expect(outcome.stderr).not.toContain('cause:');
  });

  it.each([[['cache', 'ls']], [['plugin', 'explain', 'AR9O3']], [['--help']], [['code', '--help']]])(
    '%j takes it and prints what it prints without it',
    async (argv) => {
      const root = join(await scratch(), 'store');
      const args = argv[0] === 'cache' ? [...argv, '--store', root] : argv;
      const plain = await run(args);
      expect(plain.code).toBe(0);
      expect(await run([...args, '--verbose'])).toEqual(plain);
    },
  );
});

describe('an unexpected error (no code)', () => {
  /** `main` with a stdout that fails: an error no library gave a code. */
  async function failingStdout(argv: string[]) {
    let stderr = '';
    const code = await main(argv, {
      stdout: {
        write: () => {
          throw new Error('stdout is gone', { cause: Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) });
        },
      },
      stderr: { write: (text: string) => (stderr += text) },
    });
    return { code, stderr };
  }

  it('is one line and the hint to run again with --verbose', async () => {
    expect(await failingStdout(['plugin', 'explain', 'AR9O3'])).toEqual({
      code: 1,
      stderr:
        'agentproto: unexpected error: stdout is gone\nhint: run again with --verbose to see its cause and stack trace\n',
    });
  });

  it('with --verbose: its causes and its stack, and no hint', async () => {
    const { code, stderr } = await failingStdout(['plugin', 'explain', 'AR9O3', '--verbose']);
    expect(code).toBe(1);
    const [line, cause, ...frames] = stderr.trimEnd().split('\n');
    expect(line).toBe('agentproto: unexpected error: stdout is gone');
    expect(cause).toBe('  cause: Error EPIPE: write EPIPE');
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame).toMatch(/^ {2}at /);
    expect(stderr).not.toContain('hint:');
  });
});
