import { lstat, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPlugin, loadPluginConfig, validatePlugin, writePlugin } from '@agentproto/agent-plugins';
import { CliInitError, initPlugin } from '../src/commands/plugin-init.js';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();

/** Build the project in `dir` with the library a host uses, write it, and validate the folder. */
async function buildAndValidate(dir: string) {
  const { config, contentRoot } = await loadPluginConfig(join(dir, 'plugin.toml'));
  const built = await buildPlugin(config, { contentRoot });
  const out = join(dir, 'dist');
  await writePlugin(built.files, out);
  return { config, built, validation: await validatePlugin(out) };
}

describe('plugin init', () => {
  it('writes a commented plugin.toml and one skill that build and validate with no finding', async () => {
    const dir = join(await scratch(), 'acme.tools');
    const result = await initPlugin(dir);
    expect(result).toEqual({ dir, files: ['plugin.toml', 'skills/hello/SKILL.md'] });

    const { config, built, validation } = await buildAndValidate(dir);
    expect(config.name).toBe('acme.tools');
    expect(built.findings).toEqual([]);
    expect(built.rejected).toBe(false);
    expect(validation).toMatchObject({ rejected: false, findings: [], skills: ['hello'], skippedSkills: [] });

    const toml = await readFile(join(dir, 'plugin.toml'), 'utf8');
    expect(toml).toContain('CONFIGURATION.md');
    expect(toml.startsWith('#:schema https://agentproto.sh/schemas/plugin-config/')).toBe(true);
  });

  it('every commented-out setting is valid once uncommented', async () => {
    const dir = join(await scratch(), 'kit');
    await initPlugin(dir);
    const toml = await readFile(join(dir, 'plugin.toml'), 'utf8');
    const uncommented = toml.replace(/^# (?=[a-z_]+ = |\[)/gm, '');
    // Each optional line really was there to uncomment.
    for (const key of ['spec', 'content_root', 'include', 'shared_resources', 'runtimes', 'homepage', '[[plugin.mcp]]'])
      expect(uncommented).toMatch(new RegExp(`^${key.replace(/[[\]]/g, '\\$&')}`, 'm'));
    await writeFile(join(dir, 'plugin.toml'), uncommented);
    const { config } = await loadPluginConfig(join(dir, 'plugin.toml'));
    expect(config).toMatchObject({ name: 'kit', spec: '1.1.0', author: { name: 'Your Name' } });
    expect(config.mcp?.map((server) => server.transport ?? 'stdio')).toEqual(['stdio', 'http']);
  });

  it('names the plugin my-plugin when the folder name is not a valid plugin name', async () => {
    const dir = join(await scratch(), 'My Plugin');
    await initPlugin(dir);
    expect((await loadPluginConfig(join(dir, 'plugin.toml'))).config.name).toBe('my-plugin');
  });

  it('writes into an existing empty folder', async () => {
    const dir = await scratch();
    await expect(initPlugin(dir)).resolves.toMatchObject({ dir });
  });

  it('refuses a folder that is not empty, naming it, and writes nothing', async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'notes.md'), 'mine\n');
    const error = await initPlugin(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CliInitError);
    expect(error).toMatchObject({ code: 'CLI_INIT_NOT_EMPTY', path: dir });
    expect((error as Error).message).toContain(dir);
    expect(await readdir(dir)).toEqual(['notes.md']);
  });

  it('refuses a folder that is a symbolic link, and writes nothing where it points', async () => {
    const base = await scratch();
    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere);
    const link = join(base, 'plugin');
    await symlink(elsewhere, link);
    await expect(initPlugin(link)).rejects.toMatchObject({ code: 'CLI_INIT_LINK', path: link });
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('refuses a link planted inside the folder rather than writing through it', async () => {
    const base = await scratch();
    const dir = join(base, 'plugin');
    await mkdir(dir);
    const target = join(base, 'outside.toml');
    await symlink(target, join(dir, 'plugin.toml'));
    await expect(initPlugin(dir)).rejects.toMatchObject({ code: 'CLI_INIT_NOT_EMPTY', path: dir });
    await expect(lstat(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('plugin init: what to do when it refuses', () => {
  it('a folder that is not empty, or a link: the error, then the hint', async () => {
    const base = await scratch();
    const full = join(base, 'full');
    await mkdir(full);
    await writeFile(join(full, 'notes.md'), 'mine\n');
    const notEmpty = await run(['plugin', 'init', full]);
    expect(notEmpty.code).toBe(1);
    expect(notEmpty.stderr).toMatch(
      /^agentproto: CLI_INIT_NOT_EMPTY: .*\nhint: name a new folder, e.g. agentproto plugin init my-plugin; nothing in this one was changed\n$/,
    );
    const link = join(base, 'link');
    await symlink(full, link);
    const linked = await run(['plugin', 'init', link]);
    expect(linked.code).toBe(1);
    expect(linked.stderr).toMatch(
      /^agentproto: CLI_INIT_LINK: .*\nhint: name a real folder; plugin init never writes through a link\n$/,
    );
  });
});
