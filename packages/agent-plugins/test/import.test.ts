import { tempDirs } from '@agentproto/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type PackageFile, type PluginConfig, SIDECAR, type SpecVersion, buildPlugin } from '../src/index.js';
import { importPlugin } from '../src/import/index.js';
import { validatePlugin } from '../src/validate/index.js';
import { type PluginSandbox, pluginSandbox } from './support/read-fixtures.js';
import { MCP_100, PLUGIN_100, PLUGIN_110, json, skillMd, writeTree } from './support/validate-packages.js';

const temp = tempDirs('agent-plugins-import-');
const boxes: PluginSandbox[] = [];
afterEach(async () => {
  await temp.removeAll();
  await Promise.all(boxes.splice(0).map((box) => box.remove()));
});
const tempDir = (): Promise<string> => temp.make();
function sandbox(): PluginSandbox {
  const box = pluginSandbox();
  boxes.push(box);
  return box;
}

const file = (text: string, mode: 0o644 | 0o755 = 0o644): PackageFile => ({ bytes: Buffer.from(text, 'utf8'), mode });
const text = (f: PackageFile | undefined) => Buffer.from(f?.bytes ?? []).toString('utf8');

/** A content root with everything a build handles: skills with scripts, a shared resource, included files with awkward names, a namespace folder. */
const CONTENT = new Map<string, PackageFile>([
  ['skills/review/SKILL.md', file(`${skillMd('review')}\nSee [the guide](../../references/guide.md).\n`)],
  ['skills/review/scripts/run.sh', file('#!/bin/sh\necho review\n', 0o755)],
  ['skills/deploy/SKILL.md', file(skillMd('deploy', 'Deploys the service.'))],
  ['skills/deploy/references/runbook.md', file('# Runbook\n')],
  ['references/guide.md', file('# Guide\n')],
  ['bin/server', file('#!/bin/sh\nexec node server.js\n', 0o755)],
  ['LICENSE', file('Apache-2.0\n')],
  ['docs/notes {draft}.md', file('braces\n')],
  ['docs/[x]*?.md', file('glob characters\n')],
  ['docs/!bang.md', file('bang\n')],
  ['.well-known/info.txt', file('dot folder\n')],
  ['com.example.tool/settings.json', file('{"level": 3}\n')],
  ['com.anthropic.claude-code/agents/reviewer.md', file('# Reviewer\n')],
  ['com.anthropic.claude-code/hooks/hooks.json', file('{}\n')],
  ['unshipped.txt', file('not included\n')],
]);

function configFor(spec: SpecVersion): PluginConfig {
  return {
    name: 'acme.tools',
    version: '1.2.0',
    description: 'Acme review tooling.',
    homepage: 'https://acme.example.com',
    repository: 'https://github.com/acme/tools',
    license: 'Apache-2.0',
    keywords: ['review', 'deploy'],
    author: { name: 'Acme', url: 'https://acme.example.com' },
    ...(spec === '1.1.0' ? { presentation: { displayName: 'Acme Tools', icon: './LICENSE' } } : {}),
    include: ['bin/', 'LICENSE', 'docs/**', '.well-known/*', 'com.example.tool/**', 'com.anthropic.claude-code/**'],
    sharedResources: ['references'],
    mcp: [
      {
        name: 'local',
        command: './bin/server',
        args: ['serve', '--root', '${PLUGIN_ROOT}'],
        env: { MODE: 'ci', DATA: '${PLUGIN_DATA}/db' },
        cwd: './bin',
      },
      { name: 'remote', transport: 'http', url: 'https://mcp.example.com/mcp', headers: { 'X-Team': 'review' } },
      { name: 'legacy', transport: 'sse', url: 'https://mcp.example.com/sse' },
    ],
    extensions: {
      'com.openai': { interface: { displayName: 'Acme', capabilities: ['review'] } },
      'com.example.tool': { level: 3 },
    },
  };
}

describe('importPlugin round trip', () => {
  it.each(['1.0.0', '1.1.0'] as const)('builds the same package again from what it imports (%s)', async (spec) => {
    const contentRoot = await tempDir();
    await writeTree(contentRoot, CONTENT);
    const first = await buildPlugin(configFor(spec), { contentRoot, spec });
    expect(first.rejected).toBe(false);
    expect(first.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect([...first.files.keys()]).toContain('docs/notes {draft}.md');

    const packageDir = await tempDir();
    await writeTree(packageDir, first.files);
    const validated = await validatePlugin(packageDir);
    expect(validated).toMatchObject({
      spec,
      rejected: false,
      skills: ['deploy', 'review'],
      servers: ['legacy', 'local', 'remote'],
      mcpDisabled: false,
    });
    expect(validated.findings).toEqual([]);
    const imported = await importPlugin(packageDir);
    expect(imported.rejected).toBe(false);
    expect(imported.config?.spec).toBe(spec === '1.0.0' ? undefined : spec);
    expect(imported.content.has(SIDECAR)).toBe(false);
    expect(text(imported.content.get('skills/review/SKILL.md'))).toBe(
      `${skillMd('review')}\nSee [the guide](references/guide.md).\n`,
    );
    expect(imported.config?.mcp).toEqual([
      { name: 'legacy', transport: 'sse', url: 'https://mcp.example.com/sse' },
      {
        name: 'local',
        command: './bin/server',
        args: ['serve', '--root', '${PLUGIN_ROOT}'],
        env: { DATA: '${PLUGIN_DATA}/db', MODE: 'ci' },
        cwd: './bin',
      },
      { name: 'remote', transport: 'http', url: 'https://mcp.example.com/mcp', headers: { 'X-Team': 'review' } },
    ]);

    const secondRoot = await tempDir();
    await writeTree(secondRoot, imported.content);
    const second = await buildPlugin(imported.config!, { contentRoot: secondRoot, spec });
    expect([...second.files.keys()]).toEqual([...first.files.keys()]);
    for (const [path, original] of first.files) {
      const again = second.files.get(path)!;
      expect({ path, mode: again.mode, text: text(again) }).toEqual({
        path,
        mode: original.mode,
        text: text(original),
      });
      expect(Buffer.compare(Buffer.from(again.bytes), Buffer.from(original.bytes))).toBe(0);
    }
    expect(second.findings).toEqual(first.findings.filter((f) => !f.path.startsWith('plugin#/include')));
  });

  it('keeps a package without provenance headers that way', async () => {
    const contentRoot = await tempDir();
    await writeTree(contentRoot, new Map([['skills/a/SKILL.md', file(skillMd('a'))]]));
    const first = await buildPlugin({ name: 'p', provenanceHeaders: false }, { contentRoot });
    const packageDir = await tempDir();
    await writeTree(packageDir, first.files);
    const imported = await importPlugin(packageDir);
    expect(imported.config).toEqual({ name: 'p', provenanceHeaders: false });
    const secondRoot = await tempDir();
    await writeTree(secondRoot, imported.content);
    const second = await buildPlugin(imported.config!, { contentRoot: secondRoot });
    expect([...second.files]).toEqual([...first.files]);
  });
});

describe('importPlugin', () => {
  it('maps plugin.json, skills, servers and files, and reports what has no equivalent', async () => {
    const box = sandbox();
    box.file(
      'plugin.json',
      json({
        $schema: PLUGIN_110,
        name: 'acme.tools',
        presentation: { displayName: 'Acme' },
        colour: 'blue',
        extensions: { 'com.example.tool': { a: 1 } },
      }),
    );
    box.file('skills/a/SKILL.md', skillMd('a'));
    box.file('skills/README.md', 'not a skill');
    box.file('CHANGELOG.md', '# Changes\n');
    box.file('com.example.tool/x.json', '{}');
    box.file('com.anthropic.claude-code/hooks/hooks.json', '{}');
    box.file('com.anthropic.claude-code/agents/r.md', '# r');
    box.file(
      'mcp.json',
      json({
        $schema: 'https://agent-plugins.org/schemas/1.1.0/mcp.schema.json',
        mcpServers: {
          s: { type: 'stdio', command: 'npx', args: ['${HOME}/x'], cwd: '${PLUGIN_DATA}/work' },
          bad: { type: 'stdio', command: 'a b' },
        },
      }),
    );
    const imported = await importPlugin(box.root);
    expect(imported.config).toEqual({
      name: 'acme.tools',
      spec: '1.1.0',
      presentation: { displayName: 'Acme' },
      extensions: { 'com.example.tool': { a: 1 } },
      provenanceHeaders: false,
      include: [
        'CHANGELOG.md',
        'com.anthropic.claude-code/agents/r.md',
        'com.anthropic.claude-code/hooks/hooks.json',
        'com.example.tool/x.json',
      ],
      mcp: [{ name: 's', command: 'npx', args: ['${HOME}/x'], cwd: '${PLUGIN_DATA}/work' }],
    });
    expect([...imported.content.keys()]).toEqual([
      'CHANGELOG.md',
      'com.anthropic.claude-code/agents/r.md',
      'com.anthropic.claude-code/hooks/hooks.json',
      'com.example.tool/x.json',
      'skills/a/SKILL.md',
    ]);
    expect(imported.report.map((r) => r.path)).toEqual([
      'CHANGELOG.md',
      'com.anthropic.claude-code/agents/r.md',
      'com.anthropic.claude-code/hooks/hooks.json',
      'com.example.tool/',
      'mcp.json#/mcpServers/bad',
      'mcp.json#/mcpServers/s',
      'mcp.json#/mcpServers/s/cwd',
      'plugin.json',
      'plugin.json#/colour',
      'plugin.json#/extensions/com.example.tool',
      'skills/README.md',
    ]);
    const reasons = new Map(imported.report.map((r) => [r.path, r.reason]));
    expect(reasons.get('plugin.json')).toMatch(/no version and description/);
    expect(reasons.get('mcp.json#/mcpServers/s')).toMatch(/build refuses/);
    expect(reasons.get('CHANGELOG.md')).toMatch(/config\.include/);
  });

  it('removes the provenance header and reports a skill that lacks one among skills that have it', async () => {
    const contentRoot = await tempDir();
    await writeTree(contentRoot, new Map([['skills/a/SKILL.md', file(skillMd('a'))]]));
    const built = await buildPlugin({ name: 'p', version: '1', description: 'd' }, { contentRoot });
    const packageDir = await tempDir();
    await writeTree(packageDir, built.files);
    await writeTree(packageDir, new Map([['skills/b/SKILL.md', file(skillMd('b'))]]));
    const imported = await importPlugin(packageDir);
    expect(text(imported.content.get('skills/a/SKILL.md'))).toBe(skillMd('a'));
    expect(imported.config?.provenanceHeaders).toBeUndefined();
    expect(imported.report).toEqual([
      { path: 'skills/b/SKILL.md', reason: expect.stringMatching(/no provenance header/) },
    ]);
  });

  it('gives no configuration for a rejected plugin, and agrees with validatePlugin', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'Not Valid' }));
    box.file('mcp.json', json({ $schema: MCP_100, mcpServers: {} }));
    const imported = await importPlugin(box.root);
    const validated = await validatePlugin(box.root);
    expect(imported).toMatchObject({ rejected: true, config: undefined, spec: '1.0.0' });
    expect(imported.content.size).toBe(0);
    expect(imported.findings).toEqual(validated.findings);
    expect(imported.report).toEqual([{ path: 'plugin.json', reason: expect.stringMatching(/rejects/) }]);
  });
});
