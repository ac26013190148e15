import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPluginConfig, normalizePluginConfig, PluginConfigError } from '../src/config/index.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function folderWith(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-config-'));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

describe('loading a plugin configuration', () => {
  it("reads the seed's TOML: the [plugin] table in snake_case, [[plugin.mcp]] servers, version from package.json", async () => {
    const dir = await folderWith({
      'ai.toml': `[plugin]
name = "acme.tools"
version_from = "package.json"
description = "Acme review tooling."
runtimes = ["agent-plugins"]
spec = "1.1.0"
include = ["scripts/**"]
content_root = "content"
provenance_headers = false

[plugin.author]
name = "Acme"

[[plugin.mcp]]
name = "basemind"
command = "./scripts/mcp-launch.sh"
args = ["serve"]
`,
      'package.json': '{ "name": "x", "version": "1.2.0" }',
    });
    const { config, contentRoot, baseDir } = await loadPluginConfig(join(dir, 'ai.toml'));
    expect(config).toMatchObject({
      name: 'acme.tools',
      version: '1.2.0',
      spec: '1.1.0',
      include: ['scripts/**'],
      provenanceHeaders: false,
      author: { name: 'Acme' },
      mcp: [{ name: 'basemind', command: './scripts/mcp-launch.sh', args: ['serve'] }],
    });
    expect(baseDir).toBe(dir);
    expect(contentRoot).toBe(join(dir, 'content'));
  });

  it('reads YAML and JSON the same way, with top-level mcp_servers', async () => {
    const dir = await folderWith({
      'p.yaml':
        'plugin:\n  name: acme.tools\n  version: "1.0.0"\nmcp_servers:\n  - name: web\n    transport: http\n    url: https://mcp.example.com\n',
      'p.json': JSON.stringify({
        name: 'acme.tools',
        version: '1.0.0',
        mcp_servers: [{ name: 'web', transport: 'http', url: 'https://mcp.example.com' }],
      }),
    });
    const fromYaml = await loadPluginConfig(join(dir, 'p.yaml'));
    const fromJson = await loadPluginConfig(join(dir, 'p.json'));
    expect(fromYaml.config).toEqual(fromJson.config);
    expect(fromJson.config.mcp).toEqual([{ name: 'web', transport: 'http', url: 'https://mcp.example.com' }]);
  });

  it.each([
    ['pyproject.toml', '[project]\nname = "x"\nversion = "0.19.2"\n', '0.19.2'],
    ['pyproject.toml', '[tool.poetry]\nname = "x"\nversion = "2.0.0"\n', '2.0.0'],
    ['Cargo.toml', '[package]\nname = "x"\nversion = "0.3.1"\n', '0.3.1'],
    ['Cargo.toml', '[workspace.package]\nversion = "4.5.6"\n', '4.5.6'],
  ])('takes the version from %s', async (file, text, version) => {
    const dir = await folderWith({ [file]: text, 'p.json': JSON.stringify({ name: 'a.b', versionFrom: file }) });
    expect((await loadPluginConfig(join(dir, 'p.json'))).config.version).toBe(version);
  });

  it.each([
    [
      { 'Cargo.toml': '[package]\nname = "x"\nversion.workspace = true\n' },
      'Cargo.toml',
      'inherits its version from the workspace',
    ],
    [{ 'package.json': '{}' }, 'package.json', 'declares no version'],
    [{ 'setup.py': '' }, 'setup.py', 'must name a package.json, pyproject.toml or Cargo.toml'],
    [{}, 'package.json', 'cannot be read'],
  ])('refuses a version it cannot take: %j', async (files, from, message) => {
    const dir = await folderWith({ ...files, 'p.json': JSON.stringify({ name: 'a.b', versionFrom: from }) });
    await expect(loadPluginConfig(join(dir, 'p.json'))).rejects.toThrow(message);
  });

  it('refuses files it cannot read as a table', async () => {
    const dir = await folderWith({ 'p.ini': 'x', 'bad.toml': 'name = ', 'list.json': '[]' });
    await expect(loadPluginConfig(join(dir, 'p.ini'))).rejects.toThrow('is not .json, .yaml, .yml or .toml');
    await expect(loadPluginConfig(join(dir, 'bad.toml'))).rejects.toThrow('does not parse');
    await expect(loadPluginConfig(join(dir, 'list.json'))).rejects.toThrow('must hold a table');
  });
});

describe('checking a configuration object', () => {
  it.each([
    [{}, 'name', 'is required'],
    [{ name: 'a.b', colour: 'blue' }, 'colour', 'is not a plugin setting'],
    [{ name: 'a.b', frobnicate: 1 }, 'frobnicate', /is not a plugin setting$/],
    [{ name: 'a.b', version: 1 }, 'version', 'must be a string'],
    [{ name: 'a.b', spec: '2.0.0' }, 'spec', 'must be "1.0.0" or "1.1.0"'],
    [{ name: 'a.b', include: ['../x/**'] }, 'include[0]', 'contains a ".." segment'],
    [{ name: 'a.b', include: ['/etc/**'] }, 'include[0]', 'is absolute'],
    [{ name: 'a.b', include: ['C:/x'] }, 'include[0]', 'starts with a drive letter'],
    [{ name: 'a.b', sharedResources: ['../refs'] }, 'sharedResources[0]', 'must be a folder inside the content root'],
    [{ name: 'a.b', version_from: 'package.json', versionFrom: 'package.json' }, 'versionFrom', 'is set twice'],
    [{ name: 'a.b', provenanceHeaders: 'no' }, 'provenanceHeaders', 'must be true or false'],
    [{ name: 'a.b', pi: { package_json: 'keep' } }, 'pi.packageJson', 'must be "own" or "merge"'],
    [{ name: 'a.b', mcp: [{ command: 'npx' }] }, 'mcp[0].name', 'is required'],
    // A typo of a known key says which one was meant; a key far from every one does not.
    [{ name: 'a.b', verison: '1.0.0' }, 'verison', 'is not a plugin setting; did you mean version?'],
    [{ name: 'a.b', mcp: [{ name: 's', comand: 'x' }] }, 'mcp[0].comand', 'did you mean mcp[0].command?'],
    [{ name: 'a.b', content_rot: 'x' }, 'content_rot', 'did you mean contentRoot?'],
  ])('refuses %j at %s', (raw, key, reason) => {
    const error = (() => {
      try {
        normalizePluginConfig(raw as Record<string, unknown>);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(PluginConfigError);
    expect(error).toMatchObject({ code: 'PLUGIN_CONFIG_INVALID', key });
    if (typeof reason === 'string') expect((error as Error).message).toContain(reason);
    else expect((error as Error).message).toMatch(reason);
  });

  it('accepts the camelCase and the seed spellings alike', () => {
    expect(
      normalizePluginConfig({
        name: 'a.b',
        content_root: 'c',
        pi: { skills_dir: '.pi/skills', package_json: 'merge' },
      }),
    ).toEqual({
      name: 'a.b',
      contentRoot: 'c',
      pi: { skillsDir: '.pi/skills', packageJson: 'merge' },
    });
  });
});
