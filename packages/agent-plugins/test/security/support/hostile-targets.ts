// Entry points a worker of runBounded calls with hostile input (see
// hostile-documents-never-exhaust-the-validator.test.ts): each writes the input where a
// plugin would hold it and runs the public API on it, in the worker's bounded heap.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPluginConfig, validatePlugin } from '../../../src/index.js';

const SCHEMA = 'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json';

async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'hostile-plugin-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** validatePlugin on a plugin whose one skill has this SKILL.md: the finding codes. */
export function validateSkillMd(skillMd: Uint8Array): Promise<string[]> {
  return inTempDir(async (dir) => {
    await writeFile(join(dir, 'plugin.json'), JSON.stringify({ $schema: SCHEMA, name: 'acme.tools' }));
    await mkdir(join(dir, 'skills', 'x'), { recursive: true });
    await writeFile(join(dir, 'skills', 'x', 'SKILL.md'), skillMd);
    return (await validatePlugin(dir)).findings.map((finding) => finding.code);
  });
}

/** validatePlugin on a plugin with these bytes as plugin.json, or as mcp.json beside a valid plugin.json. */
export function validateManifest({
  file,
  bytes,
}: {
  file: 'plugin.json' | 'mcp.json';
  bytes: Uint8Array;
}): Promise<string[]> {
  return inTempDir(async (dir) => {
    await writeFile(
      join(dir, 'plugin.json'),
      file === 'plugin.json' ? bytes : JSON.stringify({ $schema: SCHEMA, name: 'acme.tools' }),
    );
    if (file === 'mcp.json') await writeFile(join(dir, 'mcp.json'), bytes);
    return (await validatePlugin(dir)).findings.map((finding) => finding.code);
  });
}

/** loadPluginConfig on a configuration file with these bytes: the plugin's name, or the error it throws. */
export function loadConfig({
  extension,
  bytes,
}: {
  extension: '.yaml' | '.json' | '.toml';
  bytes: Uint8Array;
}): Promise<string> {
  return inTempDir(async (dir) => {
    const file = join(dir, `agent-plugin${extension}`);
    await writeFile(file, bytes);
    return (await loadPluginConfig(file)).config.name;
  });
}
