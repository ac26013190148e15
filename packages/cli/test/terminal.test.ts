import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serveSkillsForFile } from './support/skills-server.js';
import { describe, expect, it } from 'vitest';
import { type RunOptions, run, runJson } from './support/run.js';
import { scratchFolders, writeSampleSkill } from './support/scratch.js';

const scratch = scratchFolders();
const ESC = '\x1b';
const TTY: RunOptions = { stderrTTY: true, stdoutTTY: true, env: {} };

const skillsRepo = serveSkillsForFile();

/** A plugin project whose skill is misnamed: `plugin build` writes it with an error finding on stderr. */
async function misnamedSkill(): Promise<{ config: string; out: string }> {
  const base = await scratch();
  await mkdir(join(base, 'skills/review'), { recursive: true });
  await writeFile(join(base, 'skills/review/SKILL.md'), '---\nname: other\ndescription: Reviews.\n---\n');
  await writeFile(
    join(base, 'plugin.toml'),
    '[plugin]\nname = "acme.tools"\nversion = "1.0.0"\ndescription = "Acme."\n',
  );
  return { config: join(base, 'plugin.toml'), out: join(base, 'out') };
}

/** A declaration of one skill and a fresh cache beside it. */
async function declaration(): Promise<string[]> {
  const dir = await scratch();
  await writeFile(join(dir, 'skills.json'), JSON.stringify([`${skillsRepo.url}@v1#skills/review`]));
  return [join(dir, 'skills.json'), '--store', join(dir, 'cache')];
}

describe('colour', () => {
  it('on a terminal: the error code red, finding severities red and yellow, stdout plain', async () => {
    const { config, out } = await misnamedSkill();
    const built = await run(['plugin', 'build', config, '--out', out], TTY);
    // The misnamed skill is left out, so the build exits 1 (written, and recorded as incomplete).
    expect(built.code).toBe(1);
    // The status line ("building the package of …") is erased where the first finding starts.
    expect(built.stderr).toMatch(new RegExp(`(^|\r${ESC}\\[2K)${ESC}\\[31merror${ESC}\\[39m AR9O1 `, 'm'));
    expect(built.stdout).not.toContain(ESC);
    const failed = await run(['cache', 'ls', '--store', config], TTY);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(new RegExp(`^agentproto: ${ESC}\\[31mCACHE_ROOT_UNUSABLE${ESC}\\[39m: `));
  });

  it.each<[string, string[], RunOptions]>([
    ['stderr is not a terminal', [], { stdoutTTY: true, env: {} }],
    ['--json', ['--json'], TTY],
    ['NO_COLOR is set', [], { ...TTY, env: { NO_COLOR: '1' } }],
    ['TERM is dumb', [], { ...TTY, env: { TERM: 'dumb' } }],
  ])('none when %s', async (_why, extra, options) => {
    const { config, out } = await misnamedSkill();
    const built = await run(['plugin', 'build', config, '--out', out, ...extra], options);
    expect(built.code).toBe(1);
    const failed = await run(['cache', 'ls', '--store', config, ...extra], options);
    expect(failed.code).toBe(1);
    for (const text of [built.stdout, built.stderr, failed.stdout, failed.stderr]) expect(text).not.toContain(ESC);
  });

  it('an empty NO_COLOR counts as unset', async () => {
    const { config } = await misnamedSkill();
    expect((await run(['cache', 'ls', '--store', config], { ...TTY, env: { NO_COLOR: '' } })).stderr).toContain(
      `${ESC}[31m`,
    );
  });

  it('help and usage errors are never coloured', async () => {
    expect((await run(['plugin', '--help'], TTY)).stdout).not.toContain(ESC);
    expect((await run(['plugin', 'frobnicate'], TTY)).stderr).not.toContain(ESC);
  });
});

describe('progress', () => {
  it('fetch lines go to stderr: plain when it is not a terminal, dim on one', async () => {
    const plain = await run(['skills', 'prepare', ...(await declaration())]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/^fetching review at [0-9a-f]{40}\nfetched review: 1 file, \d+ B\n$/);
    const dim = await run(['skills', 'prepare', ...(await declaration())], TTY);
    expect(dim.code).toBe(0);
    expect(dim.stderr).toMatch(new RegExp(`^${ESC}\\[2mfetching review at [0-9a-f]{40}${ESC}\\[22m\\n`));
    expect(dim.stdout).not.toContain(ESC);
  });

  it('never with --json, also on a terminal', async () => {
    const outcome = await run(['skills', 'prepare', ...(await declaration()), '--json'], TTY);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe('');
    expect(() => JSON.parse(outcome.stdout)).not.toThrow();
  });

  it('a status line shows only on a colour terminal, and is erased before the command ends', async () => {
    const base = await realpath(await scratch());
    const root = join(base, 'store');
    await runJson(['cache', 'put', await writeSampleSkill(join(base, 'hello')), '--store', root]);
    const erase = `\r${ESC}[2K`;
    const tty = await run(['cache', 'verify', '--store', root], { stderrTTY: true, env: {} });
    expect(tty).toEqual({
      code: 0,
      stdout: 'checked 1 object: 1 ok, 0 corrupt\n',
      stderr: `${erase}${ESC}[2mverifying the objects of ${root}${ESC}[22m${erase}`,
    });
    for (const options of [{}, { stderrTTY: true, env: { NO_COLOR: '1' } }]) {
      expect(await run(['cache', 'verify', '--store', root], options)).toEqual({
        code: 0,
        stdout: 'checked 1 object: 1 ok, 0 corrupt\n',
        stderr: '',
      });
    }
  });
});

describe('status lines during long work', () => {
  /** The status lines a run showed on a colour terminal, in order, each erased after. */
  function statuses(stderr: string): string[] {
    const erase = `\r${ESC}[2K`;
    return stderr
      .split(erase)
      .filter(Boolean)
      .map((part) => part.replace(new RegExp(`${ESC}\\[2m|${ESC}\\[22m`, 'g'), ''));
  }

  it('plugin build and validate, code check and bundle say what they are doing, then erase it', async () => {
    const base = await realpath(await scratch());
    const skill = await writeSampleSkill(join(base, 'content', 'skills', 'hello'));
    expect(skill).toContain('hello');
    await writeFile(
      join(base, 'content', 'plugin.toml'),
      '[plugin]\nname = "acme.tools"\nversion = "1.0.0"\ndescription = "x"\n',
    );
    const out = join(base, 'pkg');
    const build = await run(['plugin', 'build', join(base, 'content', 'plugin.toml'), '--out', out], {
      stderrTTY: true,
      env: {},
    });
    expect(build.code, build.stderr).toBe(0);
    expect(statuses(build.stderr)).toEqual([`building the package of ${join(base, 'content', 'plugin.toml')}`]);
    const validate = await run(['plugin', 'validate', out], { stderrTTY: true, env: {} });
    expect(statuses(validate.stderr)).toEqual([`validating ${out}`]);

    await writeFile(join(base, 'tool.js'), 'console.log(1)\n');
    await writeFile(
      join(base, 'tool.yaml'),
      'kind: tool\nname: t\ncode:\n  sources:\n    - local: tool.js\nrun: tool.js\n',
    );
    const bundle = await run(['code', 'bundle', join(base, 'tool.yaml'), '--out', join(base, 'b.tgz')], {
      stderrTTY: true,
      env: {},
    });
    expect(bundle.code, bundle.stderr).toBe(0);
    expect(statuses(bundle.stderr)).toEqual([`bundling the sources of ${join(base, 'tool.yaml')}`]);
    // Not on a pipe: the results say it all.
    expect((await run(['code', 'check', join(base, 'tool.yaml')])).stderr).toBe('');
  });
});
