import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SIDECAR, buildPlugin } from '../src/index.js';
import { readPackageFiles, verifyPlugin, writePlugin } from '../src/write/index.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-write-'));
  made.push(dir);
  return dir;
}

const SKILL = '---\nname: review\ndescription: Reviews a change.\n---\n# review\n';

async function source(): Promise<string> {
  const root = await scratch();
  for (const [path, text] of Object.entries({
    'skills/review/SKILL.md': SKILL,
    'skills/review/run.sh': '#!/bin/sh\n',
    'tools/x.txt': 'x\n',
  })) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  await chmod(join(root, 'skills/review/run.sh'), 0o755);
  return root;
}

const config = { name: 'acme.tools', version: '1.0.0', description: 'd', include: ['tools/**'] };

describe('writePlugin', () => {
  it('writes every file with its mode, and nothing else', async () => {
    const pkg = await buildPlugin(config, { contentRoot: await source() });
    const out = join(await scratch(), 'plugin');
    await writePlugin(pkg.files, out);
    const files = await readPackageFiles(out);
    expect([...files.keys()].sort()).toEqual([...pkg.files.keys()].sort());
    for (const [path, file] of pkg.files)
      expect(Buffer.from(files.get(path)!).equals(Buffer.from(file.bytes)), path).toBe(true);
    expect((await stat(join(out, 'skills/review/run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(join(out, 'plugin.json'))).mode & 0o777).toBe(0o644);
    // No staging folder is left beside it.
    expect(await readdir(dirname(out))).toEqual(['plugin']);
  });

  it('refuses a non-empty folder unless told to replace it, and then leaves only the new package', async () => {
    const pkg = await buildPlugin(config, { contentRoot: await source() });
    const out = join(await scratch(), 'plugin');
    await mkdir(out);
    await writeFile(join(out, 'old.txt'), 'old');
    await expect(writePlugin(pkg.files, out)).rejects.toMatchObject({ code: 'PLUGIN_WRITE_FAILED' });
    expect(await readFile(join(out, 'old.txt'), 'utf8')).toBe('old');
    await writePlugin(pkg.files, out, { replace: true });
    expect((await readdir(out)).sort()).toEqual([SIDECAR, 'plugin.json', 'skills', 'tools']);
    expect(await readdir(dirname(out))).toEqual(['plugin']);
  });

  it('refuses a package path that would leave the folder, and writes nothing', async () => {
    const out = join(await scratch(), 'plugin');
    const files = new Map([['../escape.txt', { bytes: Buffer.from('x'), mode: 0o644 as const }]]);
    await expect(writePlugin(files, out)).rejects.toMatchObject({ code: 'PLUGIN_WRITE_FAILED' });
    expect(await readdir(dirname(out))).toEqual([]);
  });
});

describe('verifyPlugin', () => {
  it('passes on the package the configuration builds', async () => {
    const contentRoot = await source();
    const out = join(await scratch(), 'plugin');
    await writePlugin((await buildPlugin(config, { contentRoot })).files, out);
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual({
      ok: true,
      changed: [],
      missing: [],
      unexpected: [],
      edited: [],
      omitted: [],
    });
  });

  it('reports an edited, a missing and an extra file, and an edit the sidecar sees', async () => {
    const contentRoot = await source();
    const out = join(await scratch(), 'plugin');
    await writePlugin((await buildPlugin(config, { contentRoot })).files, out);
    await writeFile(join(out, 'tools/x.txt'), 'edited\n');
    await rm(join(out, 'skills/review/run.sh'));
    await writeFile(join(out, 'notes.md'), 'extra\n');
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual({
      ok: false,
      changed: ['tools/x.txt'],
      missing: ['skills/review/run.sh'],
      unexpected: ['notes.md'],
      edited: ['tools/x.txt'],
      omitted: [],
    });
  });

  it('reports drift when the configuration changed, and never follows a link out of the folder', async () => {
    const contentRoot = await source();
    const out = join(await scratch(), 'plugin');
    await writePlugin((await buildPlugin(config, { contentRoot })).files, out);
    const outside = join(await scratch(), 'secret.txt');
    await writeFile(outside, 'secret');
    await symlink(outside, join(out, 'tools/link.txt'));
    const result = await verifyPlugin(out, { ...config, description: 'changed' }, { contentRoot });
    expect(result.changed).toEqual([SIDECAR, 'plugin.json']);
    expect(result.unexpected).toEqual([]);
    expect(result.edited).toEqual([]);
  });
});
