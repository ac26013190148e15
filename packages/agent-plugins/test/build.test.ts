import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SIDECAR, buildPlugin, checkPluginManifest, checkSkill, readServers } from '../src/index.js';
import { contentHash } from '../src/bundle/hash.js';
import { driftBetween, parseSidecar } from '../src/build/sidecar.js';
import { removeProvenanceHeader } from '../src/skills/provenance.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function contentRoot(files: Record<string, string | { text: string; mode: number }>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'agent-plugins-build-'));
  made.push(root);
  for (const [path, value] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), typeof value === 'string' ? value : value.text);
    if (typeof value !== 'string') await chmod(join(root, path), value.mode);
  }
  return root;
}

const SKILL = (name: string) =>
  `---\nname: ${name}\ndescription: Reviews a change.\n---\n# ${name}\n\nSee [the guide](../../references/guide.md).\n`;
const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('buildPlugin', () => {
  it('builds plugin.json, the valid skills with shared resources, included files, mcp.json and the sidecar', async () => {
    const root = await contentRoot({
      'skills/review/SKILL.md': SKILL('review'),
      'skills/review/scripts/run.sh': { text: '#!/bin/sh\n', mode: 0o755 },
      'skills/broken/SKILL.md': SKILL('not-broken'),
      'references/guide.md': 'guide\n',
      'scripts/mcp-launch.sh': { text: '#!/bin/sh\nexec server\n', mode: 0o755 },
      'notes.txt': 'not shipped\n',
    });
    const pkg = await buildPlugin(
      {
        name: 'acme.tools',
        version: '1.2.0',
        description: 'Acme review tooling.',
        author: { name: 'Acme', email: '' },
        include: ['scripts/**'],
        sharedResources: ['references'],
        mcp: [
          { name: 'basemind', command: './scripts/mcp-launch.sh', args: ['serve'] },
          { name: 'off', command: 'npx', enabled: false },
        ],
      },
      { contentRoot: root },
    );
    expect(pkg.rejected).toBe(false);
    expect([...pkg.files.keys()]).toEqual([
      'mcp.json',
      'plugin.json',
      'scripts/mcp-launch.sh',
      'skills/review/SKILL.md',
      'skills/review/references/guide.md',
      'skills/review/scripts/run.sh',
      SIDECAR,
    ]);
    const manifest = JSON.parse(text(pkg.files.get('plugin.json')?.bytes));
    expect(manifest).toEqual({
      $schema: 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json',
      name: 'acme.tools',
      version: '1.2.0',
      description: 'Acme review tooling.',
      author: { name: 'Acme' },
    });
    expect(checkPluginManifest(manifest).findings).toEqual([]);
    expect(pkg.files.get('scripts/mcp-launch.sh')?.mode).toBe(0o755);
    expect(pkg.files.get('skills/review/scripts/run.sh')?.mode).toBe(0o755);
    // The skill carries a provenance header that import removes, and its link points at the copy.
    const skillMd = pkg.files.get('skills/review/SKILL.md')!.bytes;
    const { bytes: original, header } = removeProvenanceHeader(skillMd);
    expect(header).toBeDefined();
    expect(text(original)).toBe(SKILL('review').replace('../../references/guide.md', 'references/guide.md'));
    expect(checkSkill('review', skillMd).accepted).toBe(true);
    // mcp.json reads back as a client reads it, with the disabled server left out.
    const mcp = readServers(JSON.parse(text(pkg.files.get('mcp.json')?.bytes)));
    expect(Object.keys(mcp.servers)).toEqual(['basemind']);
    // What was left out is reported.
    const codes = pkg.findings.map((f) => `${f.code} ${f.path}`);
    expect(codes).toContain('skill.name-mismatch skills/broken/SKILL.md#/frontmatter/name');
    expect(codes.some((c) => c.startsWith('mcp.server-disabled'))).toBe(true);
    // The sidecar records every other file's hash.
    const sidecar = parseSidecar(pkg.files.get(SIDECAR)!.bytes)!;
    expect(Object.keys(sidecar.files)).toEqual([...pkg.files.keys()].filter((path) => path !== SIDECAR));
    expect(sidecar.files['plugin.json']).toBe(contentHash(pkg.files.get('plugin.json')!.bytes));
  });

  it('gives identical bytes whatever the order of the configuration, and honours provenanceHeaders = false', async () => {
    const root = await contentRoot({
      'skills/a/SKILL.md': SKILL('a'),
      'skills/b/SKILL.md': SKILL('b'),
      'x/1.txt': '1',
      'x/2.txt': '2',
    });
    const one = await buildPlugin(
      { name: 'p', keywords: ['k'], include: ['x/1.txt', 'x/2.txt'], provenanceHeaders: false },
      { contentRoot: root, spec: '1.1.0' },
    );
    const two = await buildPlugin(
      { include: ['x/2.txt', 'x/1.txt'], keywords: ['k'], name: 'p', provenanceHeaders: false },
      { contentRoot: root, spec: '1.1.0' },
    );
    expect([...two.files.entries()]).toEqual([...one.files.entries()]);
    expect(text(one.files.get('skills/a/SKILL.md')?.bytes)).toBe(SKILL('a'));
    expect(JSON.parse(text(one.files.get('plugin.json')?.bytes)).$schema).toBe(
      'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json',
    );
  });

  it('reports drift: an edited, a missing and an unexpected file', async () => {
    const root = await contentRoot({ 'skills/a/SKILL.md': SKILL('a') });
    const pkg = await buildPlugin({ name: 'p' }, { contentRoot: root });
    const onDisk = new Map([...pkg.files].map(([path, file]) => [path, file.bytes]));
    onDisk.set('plugin.json', Buffer.from('{}\n'));
    onDisk.delete('skills/a/SKILL.md');
    onDisk.set('extra.txt', Buffer.from('x'));
    expect(driftBetween(pkg.files, onDisk)).toEqual({
      changed: ['plugin.json'],
      missing: ['skills/a/SKILL.md'],
      unexpected: ['extra.txt'],
    });
  });

  it('writes extension data as extensionData normalizes it: an invalid namespace left out, com.openai sorted, others in their own order', async () => {
    const root = await contentRoot({});
    const pkg = await buildPlugin(
      {
        name: 'p',
        extensions: { 'com.example.tool': { b: 1, a: 2 }, 'com.openai': { interface: { z: 1, a: 1 } }, Bad: {} },
      },
      { contentRoot: root },
    );
    expect(pkg.rejected).toBe(false);
    expect(text(pkg.files.get('plugin.json')?.bytes)).toContain(
      '"com.example.tool": {\n      "b": 1,\n      "a": 2\n    }',
    );
    expect(JSON.parse(text(pkg.files.get('plugin.json')?.bytes)).extensions).toEqual({
      'com.example.tool': { b: 1, a: 2 },
      'com.openai': { interface: { a: 1, z: 1 } },
    });
    expect(pkg.findings.map((f) => f.code)).toContain('extension.namespace-invalid');
  });

  it('checks included extension folders against their namespace layout, and ships other folders as they are', async () => {
    const root = await contentRoot({
      'com.anthropic.claude-code/agents/reviewer.md': '# reviewer\n',
      'com.anthropic.claude-code/notes/x.md': 'off the layout\n',
      'com.example.tool/anything.json': '{}\n',
      'docs/guide.md': 'guide\n',
    });
    const pkg = await buildPlugin(
      { name: 'p', include: ['com.anthropic.claude-code/**', 'com.example.tool/**', 'docs/**'] },
      { contentRoot: root },
    );
    expect([...pkg.files.keys()].filter((path) => path !== SIDECAR && path !== 'plugin.json')).toEqual([
      'com.anthropic.claude-code/agents/reviewer.md',
      'com.anthropic.claude-code/notes/x.md',
      'com.example.tool/anything.json',
      'docs/guide.md',
    ]);
    expect(pkg.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'extension.layout-unknown warning com.anthropic.claude-code/notes/x.md',
    ]);
  });

  it('rejects a configuration whose plugin.json a client would reject, and says why', async () => {
    const root = await contentRoot({});
    const pkg = await buildPlugin({ name: 'Not Valid' }, { contentRoot: root });
    expect(pkg.rejected).toBe(true);
    expect(pkg.findings.map((f) => f.code)).toContain('plugin.name-invalid');
  });
});
