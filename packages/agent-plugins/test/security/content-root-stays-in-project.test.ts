import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PluginContentRootError, buildPlugin, loadPluginConfig } from '../../src/index.js';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

const HOST_SECRET = 'host-secret-7f3a9c';

/** A host folder with a secret, and beside it a project whose configuration points `content_root` at `contentRoot`. */
async function projectPointingAt(
  contentRoot: string,
  linkContent = false,
): Promise<{ config: string; host: string; project: string }> {
  const top = await mkdtemp(join(tmpdir(), 'content-root-'));
  made.push(top);
  const host = join(top, 'host');
  await mkdir(join(host, 'skills', 'leak'), { recursive: true });
  await writeFile(join(host, 'secret.txt'), HOST_SECRET);
  await writeFile(
    join(host, 'skills', 'leak', 'SKILL.md'),
    `---\nname: leak\ndescription: ${HOST_SECRET}\n---\n# leak\n`,
  );
  const project = join(top, 'project');
  await mkdir(project);
  if (linkContent) await symlink(host, join(project, 'content'));
  const config = join(project, 'plugin.toml');
  await writeFile(
    config,
    `[plugin]\nname = "acme.tools"\nversion = "1.0.0"\ndescription = "d"\ncontent_root = ${JSON.stringify(contentRoot)}\ninclude = ["**"]\n`,
  );
  return { config, host, project };
}

describe('content_root stays inside the configuration folder', () => {
  it('refuses a content root that climbs out of the configuration folder, before any file is read', async () => {
    const { config, project } = await projectPointingAt('../host');
    const error = await loadPluginConfig(config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginContentRootError);
    expect(error).toMatchObject({
      code: 'PLUGIN_CONTENT_ROOT_OUTSIDE',
      file: config,
      configDir: project,
      how: 'as written',
    });
    expect((error as Error).message).not.toContain(HOST_SECRET);
  });

  it('refuses the content root ../../../../etc of the issue', async () => {
    const { config } = await projectPointingAt('../../../../etc');
    await expect(loadPluginConfig(config)).rejects.toMatchObject({ code: 'PLUGIN_CONTENT_ROOT_OUTSIDE' });
  });

  it('refuses an absolute content root outside the folder', async () => {
    const { config, host } = await projectPointingAt('/placeholder');
    await writeFile(config, `name = "acme.tools"\ncontent_root = ${JSON.stringify(host)}\n`);
    await expect(loadPluginConfig(config)).rejects.toMatchObject({
      code: 'PLUGIN_CONTENT_ROOT_OUTSIDE',
      how: 'as written',
    });
  });

  it('refuses a content root inside the folder that is a link to a folder outside it', async () => {
    const { config } = await projectPointingAt('content', true);
    await expect(loadPluginConfig(config)).rejects.toMatchObject({
      code: 'PLUGIN_CONTENT_ROOT_OUTSIDE',
      how: 'once links are resolved',
    });
  });

  it('refuses a content root below a linked folder that leaves the project', async () => {
    const { config } = await projectPointingAt('content/skills', true);
    await expect(loadPluginConfig(config)).rejects.toMatchObject({
      code: 'PLUGIN_CONTENT_ROOT_OUTSIDE',
      how: 'once links are resolved',
    });
  });

  it('accepts the configuration folder itself and folders below it', async () => {
    const { config, project } = await projectPointingAt('.');
    expect((await loadPluginConfig(config)).contentRoot).toBe(project);
    await mkdir(join(project, 'content', 'skills'), { recursive: true });
    await writeFile(config, `name = "acme.tools"\ncontent_root = "./content/../content/skills"\n`);
    expect((await loadPluginConfig(config)).contentRoot).toBe(join(project, 'content', 'skills'));
  });

  it('builds from outside only when the host opts out in code, and then packages what it points at', async () => {
    const { config } = await projectPointingAt('content', true);
    const loaded = await loadPluginConfig(config, { allowContentRootOutside: true });
    const pkg = await buildPlugin(loaded.config, { contentRoot: loaded.contentRoot });
    expect(Buffer.from(pkg.files.get('secret.txt')!.bytes).toString()).toBe(HOST_SECRET);
  });

  it('gives a configuration file no key that opts out', async () => {
    const { config } = await projectPointingAt('../host');
    await writeFile(config, `name = "acme.tools"\ncontent_root = "../host"\nallow_content_root_outside = true\n`);
    await expect(loadPluginConfig(config)).rejects.toMatchObject({ code: 'PLUGIN_CONFIG_INVALID' });
    await writeFile(config, `name = "acme.tools"\ncontent_root = "../host"\nallowContentRootOutside = true\n`);
    await expect(loadPluginConfig(config)).rejects.toMatchObject({ code: 'PLUGIN_CONFIG_INVALID' });
  });
});
