import { describe, expect, it } from 'vitest';
import { sandboxesRemovedAfterEach } from './support/read-fixtures.js';
import { MCP_100, PACKAGE_CASES, PLUGIN_100, json, skillMd } from './support/validate-packages.js';
import { importPlugin } from '../src/import/index.js';
import { validatePlugin } from '../src/validate/index.js';
import { type PackageFs, nodePackageFs } from '../src/read/index.js';

const sandbox = sandboxesRemovedAfterEach();

describe('validatePlugin and importPlugin reach the same verdict', () => {
  it.each(PACKAGE_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const box = sandbox();
    c.make(box);
    const validated = await validatePlugin(box.root);
    const imported = await importPlugin(box.root);

    expect(validated.rejected).toBe(c.rejected);
    expect(validated.skills).toEqual(c.skills);
    expect(validated.servers).toEqual(c.servers);
    expect(validated.mcpDisabled).toBe(c.mcpDisabled);
    expect(validated.findings.map((f) => f.code)).toEqual(expect.arrayContaining(c.codes));
    // A finding is an error exactly when something a client would load is not loaded.
    if (c.codes.length === 0) expect(validated.findings.filter((f) => f.severity === 'error')).toEqual([]);

    expect(imported.rejected).toBe(validated.rejected);
    expect(imported.spec).toBe(validated.spec);
    expect(imported.findings).toEqual(validated.findings);
    const importedSkills = [
      ...new Set([...imported.content.keys()].filter((p) => p.startsWith('skills/')).map((p) => p.split('/')[1])),
    ];
    expect(importedSkills).toEqual(validated.skills);
    expect((imported.config?.mcp ?? []).map((s) => s.name)).toEqual(validated.servers);
    expect(imported.report.map((r) => r.path)).toEqual(expect.arrayContaining(c.reported));
    if (c.rejected) {
      expect(imported.config).toBeUndefined();
      expect(imported.content.size).toBe(0);
    }
  });
});

describe('validatePlugin', () => {
  it('returns sorted findings and reads nothing outside the root', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p', colour: 'x', extensions: 'no' }));
    box.link('z-outside.txt', `${box.outside}/secret.txt`);
    box.file('skills/a/SKILL.md', skillMd('b'));
    const result = await validatePlugin(box.root);
    const paths = result.findings.map((f) => f.path);
    expect(paths).toEqual([...paths].sort());
    expect(result.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'plugin.unknown-field warning plugin.json#/colour',
      'plugin.extensions-not-object warning plugin.json#/extensions',
      'skill.name-mismatch error skills/a/SKILL.md#/frontmatter/name',
      'read.outside-root warning z-outside.txt',
    ]);
    expect(result.findings.some((f) => f.message.includes('secret'))).toBe(false);
    expect(result).toMatchObject({ spec: '1.0.0', rejected: false, skills: [], servers: [], mcpDisabled: false });
  });

  it('treats a plugin.json outside the root, or a folder named plugin.json, as a rejection', async () => {
    const outside = sandbox();
    outside.link('plugin.json', `${outside.outside}/secret.txt`);
    expect(await validatePlugin(outside.root)).toMatchObject({ rejected: true, skills: [], servers: [] });
    const folder = sandbox();
    folder.dir('plugin.json');
    const result = await validatePlugin(folder.root);
    expect(result.rejected).toBe(true);
    expect(result.findings.map((f) => f.code)).toEqual(['read.not-regular-file']);
  });

  it('refuses plugin.json with a byte order mark, as JSON.parse does', async () => {
    const box = sandbox();
    box.file('plugin.json', `\uFEFF${json({ $schema: PLUGIN_100, name: 'p' })}`);
    const result = await validatePlugin(box.root);
    expect(result.rejected).toBe(true);
    expect(result.findings.map((f) => f.code)).toEqual(['plugin.not-json']);
  });

  it('disables every skill when skills is a file, and MCP when mcp.json is a folder (§6.2)', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.file('skills', 'not a folder');
    box.dir('mcp.json');
    const result = await validatePlugin(box.root);
    expect(result).toMatchObject({ rejected: false, skills: [], servers: [], mcpDisabled: true });
    expect(result.findings.map((f) => `${f.code} ${f.path}`)).toEqual([
      'read.not-regular-file mcp.json',
      'read.not-directory skills',
    ]);
  });

  it('loads a skill whose own script is unreadable, and warns about that file', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.file('skills/a/SKILL.md', skillMd('a'));
    box.link('skills/a/scripts/leak.sh', `${box.outside}/secret.txt`);
    const result = await validatePlugin(box.root);
    expect(result.skills).toEqual(['a']);
    expect(result.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'read.outside-root warning skills/a/scripts/leak.sh',
    ]);
  });

  it('warns about a ./ command that is a folder and a ./ cwd that does not exist; both servers load', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.dir('bin/tool');
    box.file(
      'mcp.json',
      json({
        $schema: MCP_100,
        mcpServers: {
          a: { type: 'stdio', command: './bin/tool' },
          b: { type: 'stdio', command: 'npx', cwd: '${PLUGIN_ROOT}/work' },
        },
      }),
    );
    const result = await validatePlugin(box.root);
    expect(result.servers).toEqual(['a', 'b']);
    expect(result.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'mcp.command-not-bundled warning mcp.json#/mcpServers/a/command',
      'mcp.cwd-not-directory warning mcp.json#/mcpServers/b/cwd',
    ]);
  });

  it('does not loop on a link to an ancestor folder', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.file('docs/a.md', 'a');
    box.link('docs/again', '..');
    const result = await validatePlugin(box.root);
    expect(result.rejected).toBe(false);
    expect(result.findings.map((f) => `${f.code} ${f.path}`)).toEqual(['package.link-cycle docs/again']);
  });

  it('warns about a file of a known namespace folder that is off its layout', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.file('com.anthropic.claude-code/agents/review.md', 'agent');
    box.file('com.anthropic.claude-code/notes.txt', 'x');
    const result = await validatePlugin(box.root);
    expect(result.findings.map((f) => `${f.code} ${f.path}`)).toEqual([
      'extension.layout-unknown com.anthropic.claude-code/notes.txt',
    ]);
  });

  it('rejects the plugin when its files exceed the package limit, and an over-large file is only denied', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.file('big.bin', 'x'.repeat(200));
    expect(await validatePlugin(box.root, { maxPackageBytes: 150 })).toMatchObject({
      rejected: true,
      skills: [],
      servers: [],
    });
    const denied = await validatePlugin(box.root, { maxFileBytes: 150 });
    expect(denied.rejected).toBe(false);
    expect(denied.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'read.file-too-large warning big.bin',
    ]);
  });

  it('denies an unreadable bundled file and loads the rest, whoever runs', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.file('locked.txt', 'x');
    // chmod 000 stops no one running as root: the filesystem itself refuses this one file.
    const denying: PackageFs = {
      ...nodePackageFs,
      open: async (path, flags) => {
        if (path.endsWith('/locked.txt')) throw Object.assign(new Error('denied'), { code: 'EACCES' });
        return nodePackageFs.open(path, flags);
      },
    };
    const result = await validatePlugin(box.root, { fs: denying });
    expect(result.rejected).toBe(false);
    expect(result.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'read.unreadable warning locked.txt',
    ]);
  });
});
