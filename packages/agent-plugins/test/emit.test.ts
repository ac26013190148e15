import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { emitPlugin, readPackageFiles } from '../src/index.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-emit-test-'));
  made.push(dir);
  return dir;
}
async function contentRoot(files: Record<string, string>): Promise<string> {
  const root = await scratch();
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}
const SKILL = (name: string) => `---\nname: ${name}\ndescription: Does ${name}.\n---\n# ${name}\n`;

const config = {
  name: 'acme.tools',
  version: '1.2.0',
  description: 'Acme review tooling.',
  spec: '1.1.0' as const,
  presentation: { displayName: 'Acme Tools' },
  include: ['bin/**'],
  mcp: [
    { name: 'local', command: './bin/server', args: ['serve'] },
    { name: 'web', transport: 'http' as const, url: 'https://mcp.example.com/mcp' },
  ],
};

describe('emitPlugin', () => {
  it("emits a clean package that validates without findings, in the configuration's version", async () => {
    const root = await contentRoot({
      'skills/review/SKILL.md': SKILL('review'),
      'bin/server': '#!/bin/sh\n',
      'notes.md': 'not shipped',
    });
    await chmod(join(root, 'bin/server'), 0o755);
    const out = join(await scratch(), 'emit', 'acme.tools');
    const result = await emitPlugin(config, out, { contentRoot: root });
    expect(result.spec).toBe('1.1.0');
    expect(result.validation).toMatchObject({
      rejected: false,
      findings: [],
      skills: ['review'],
      servers: ['local', 'web'],
    });
    expect(result.findings).toEqual([]);
    expect(result.files).toEqual([
      '.agentproto-generated.json',
      'bin/server',
      'mcp.json',
      'plugin.json',
      'skills/review/SKILL.md',
    ]);
    expect([...(await readPackageFiles(out)).keys()].sort()).toEqual([...result.files].sort());
  });

  it('converts to another version: 1.1.0 to 1.0.0 leaves presentation out and says so', async () => {
    const root = await contentRoot({ 'skills/review/SKILL.md': SKILL('review'), 'bin/server': '#!/bin/sh\n' });
    const out = join(await scratch(), 'out');
    const result = await emitPlugin(config, out, { contentRoot: root, spec: '1.0.0' });
    const files = await readPackageFiles(out);
    const manifest = JSON.parse(Buffer.from(files.get('plugin.json')!).toString());
    expect(manifest.$schema).toBe('https://agent-plugins.org/schemas/1.0.0/plugin.schema.json');
    expect(manifest.presentation).toBeUndefined();
    expect(JSON.parse(Buffer.from(files.get('mcp.json')!).toString()).$schema).toBe(
      'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json',
    );
    expect(result.findings.map((f) => `${f.code} ${f.path}`)).toContain(
      'plugin.unknown-field plugin.json#/presentation',
    );
    expect(result.validation.findings).toEqual([]);
  });

  it('ships nothing a client would skip: a skill that breaks the rules and a disabled server are reported, not emitted', async () => {
    const root = await contentRoot({
      'skills/review/SKILL.md': SKILL('review'),
      'skills/bad/SKILL.md': SKILL('not-bad'),
      'bin/server': '#!/bin/sh\n',
    });
    const out = join(await scratch(), 'out');
    const result = await emitPlugin(
      { ...config, mcp: [...config.mcp, { name: 'off', command: 'npx', enabled: false }] },
      out,
      { contentRoot: root },
    );
    expect(result.files.filter((path) => path.startsWith('skills/'))).toEqual(['skills/review/SKILL.md']);
    expect(result.validation.servers).toEqual(['local', 'web']);
    const codes = result.findings.map((f) => f.code);
    expect(codes).toContain('skill.name-mismatch');
    expect(codes).toContain('mcp.server-disabled');
  });

  it('gives the same bytes on every emit, and refuses to overwrite a non-empty folder unless asked', async () => {
    const root = await contentRoot({ 'skills/review/SKILL.md': SKILL('review'), 'bin/server': '#!/bin/sh\n' });
    const base = await scratch();
    await emitPlugin(config, join(base, 'a'), { contentRoot: root });
    await emitPlugin(config, join(base, 'b'), { contentRoot: root });
    const a = await readPackageFiles(join(base, 'a'));
    const b = await readPackageFiles(join(base, 'b'));
    expect([...b.entries()].map(([p, bytes]) => [p, Buffer.from(bytes).toString('base64')])).toEqual(
      [...a.entries()].map(([p, bytes]) => [p, Buffer.from(bytes).toString('base64')]),
    );
    await expect(emitPlugin(config, join(base, 'a'), { contentRoot: root })).rejects.toMatchObject({
      code: 'PLUGIN_WRITE_FAILED',
    });
    await emitPlugin(config, join(base, 'a'), { contentRoot: root, replace: true });
    expect((await readdir(base)).sort()).toEqual(['a', 'b']);
  });

  it('refuses a configuration a client would reject, and writes nothing', async () => {
    const root = await contentRoot({});
    const out = join(await scratch(), 'out');
    await expect(emitPlugin({ name: 'Bad Name' }, out, { contentRoot: root })).rejects.toMatchObject({
      code: 'PLUGIN_REJECTED',
    });
    await expect(readdir(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
