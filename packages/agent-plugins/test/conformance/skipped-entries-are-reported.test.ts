import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Finding, type PackageFs, importPlugin, validatePlugin } from '../../src/index.js';
import { nodePackageFs } from '../../src/read/node.js';
import { type PluginSandbox, sandboxesRemovedAfterEach } from '../support/read-fixtures.js';
import { MCP_100, PACKAGE_CASES, PLUGIN_100, json, skillMd } from '../support/validate-packages.js';

// Agent Plugins 1.0.0 (reference/agent-plugins/1.0.0/spec.md):
// §4.1, item 4 of the failure boundaries: "If an MCP server `command` or `cwd` fails
//   containment, the client MUST treat that server entry as invalid under §7.2.2."
// §7.2.2 item 3: "If an individual server entry does not satisfy the requirements in §7.2.1,
//   the client MUST skip that server and continue loading other servers and component types.
//   The client SHOULD report the invalid entry."
// §7.1: "the client MUST skip that skill and continue loading other skills and component
//   types. The client SHOULD report the invalid skill."
// §11.3 item 4: "Clients SHOULD report invalid configuration and component failures."
// So every entry a client drops is reported where it is declared, not only through a file it uses.

const sandbox = sandboxesRemovedAfterEach();

const serverAt = (name: string) => `mcp.json#/mcpServers/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
const errorsAt = (findings: readonly Finding[], own: string) =>
  findings.filter(
    (f) => f.severity === 'error' && (f.path === own || f.path.startsWith(`${own}/`) || f.path.startsWith(`${own}#`)),
  );

/** A 1.0.0 package with one good server (`local`) and one skill, plus whatever `extra` adds. */
function basePackage(box: PluginSandbox, servers: Record<string, unknown>): void {
  box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
  box.file('skills/review/SKILL.md', skillMd('review'));
  box.file('bin/server', '#!/bin/sh\n');
  box.file(
    'mcp.json',
    json({ $schema: MCP_100, mcpServers: { local: { type: 'stdio', command: './bin/server' }, ...servers } }),
  );
}

describe('§4.1 item 4, §7.2.2 item 3: a server whose command or cwd fails containment is reported at its own entry', () => {
  it.each([
    [
      'a ./ command through a link leaving the root',
      (box: PluginSandbox) => box.link('bin/probe', join(box.outside, 'secret.txt')),
      { type: 'stdio', command: './bin/probe' },
      'command',
      'read.outside-root',
    ],
    [
      'a ./ command through a folder link leaving the root',
      (box: PluginSandbox) => box.link('tools', box.outside),
      { type: 'stdio', command: './tools/secret.txt' },
      'command',
      'read.outside-root',
    ],
    [
      'a ./ command through a dangling link',
      (box: PluginSandbox) => box.link('bin/gone', 'nowhere'),
      { type: 'stdio', command: './bin/gone' },
      'command',
      'read.link-dangling',
    ],
    [
      'a ./ command through a link loop',
      (box: PluginSandbox) => box.link('bin/loop', 'loop'),
      { type: 'stdio', command: './bin/loop' },
      'command',
      'read.link-loop',
    ],
    [
      'a ./ cwd through a link leaving the root',
      (box: PluginSandbox) => box.link('data', box.outside),
      { type: 'stdio', command: 'npx', cwd: './data' },
      'cwd',
      'read.outside-root',
    ],
    [
      'a ${PLUGIN_ROOT} cwd through a link leaving the root',
      (box: PluginSandbox) => box.link('work', box.outside),
      { type: 'stdio', command: 'npx', cwd: '${PLUGIN_ROOT}/work' },
      'cwd',
      'read.outside-root',
    ],
  ] as const)(
    '%s: skipped, with mcp.server-path-refused at mcp.json#/mcpServers/probe/<field>',
    async (_what, make, entry, field, readCode) => {
      const box = sandbox();
      basePackage(box, { probe: entry });
      make(box);
      const result = await validatePlugin(box.root);
      expect(result.servers).toEqual(['local']);
      expect(result.skippedServers).toEqual(['probe']);
      expect(result.skills).toEqual(['review']);
      const own = errorsAt(result.findings, serverAt('probe'));
      expect(own.map((f) => `${f.code} ${f.rule} ${f.path}`)).toEqual([
        `mcp.server-path-refused AR9O5 ${serverAt('probe')}/${field}`,
      ]);
      // The entry's finding names the path and the reader's finding, so the two are read together.
      expect(own[0]?.message).toContain(readCode);
      expect(result.findings.some((f) => f.code === readCode && !f.path.startsWith('mcp.json'))).toBe(true);
    },
  );

  it('the finding at the entry never quotes the command, which is package data', async () => {
    const box = sandbox();
    const token = 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB';
    basePackage(box, { probe: { type: 'stdio', command: `./bin/${token}` } });
    box.link(`bin/${token}`, join(box.outside, 'secret.txt'));
    const result = await validatePlugin(box.root);
    const own = errorsAt(result.findings, serverAt('probe'));
    expect(own.map((f) => f.code)).toEqual(['mcp.server-path-refused']);
    expect(own[0]?.message).not.toContain(token);
  });

  it('importPlugin reports the same server and carries the finding naming it', async () => {
    const box = sandbox();
    basePackage(box, { probe: { type: 'stdio', command: './bin/probe' } });
    box.link('bin/probe', join(box.outside, 'secret.txt'));
    const imported = await importPlugin(box.root);
    expect(imported.config?.mcp?.map((s) => s.name)).toEqual(['local']);
    expect(imported.report.map((e) => e.path)).toContain(serverAt('probe'));
    expect(errorsAt(imported.findings, serverAt('probe')).map((f) => f.code)).toEqual(['mcp.server-path-refused']);
  });
});

describe('§7.1, §7.2.2: every skipped skill and server has an error finding at its own path', () => {
  it.each(PACKAGE_CASES.filter((c) => !c.rejected).map((c) => [c.name, c] as const))(
    '%s',
    async (_name, packageCase) => {
      const box = sandbox();
      packageCase.make(box);
      const [validation, imported] = await Promise.all([validatePlugin(box.root), importPlugin(box.root)]);
      for (const name of validation.skippedSkills)
        expect(errorsAt(validation.findings, `skills/${name}`), `skill ${name}`).not.toEqual([]);
      for (const name of validation.skippedServers)
        expect(errorsAt(validation.findings, serverAt(name)), `server ${name}`).not.toEqual([]);
      // What import reports as skipped is exactly what validation reports as skipped.
      const importSkipped = imported.report
        .filter((e) => /^skills\/[^/]+\/$/.test(e.path) && e.reason.includes('skips this skill'))
        .map((e) => e.path);
      expect(importSkipped).toEqual(validation.skippedSkills.map((name) => `skills/${name}/`));
      const importSkippedServers = imported.report
        .filter((e) => e.reason.includes('skips this server'))
        .map((e) => e.path);
      expect(importSkippedServers).toEqual(validation.skippedServers.map(serverAt));
    },
  );

  it('a SKILL.md that disappears between discovery and reading: the skill is skipped with skill.skipped at skills/<name>/', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    box.file('skills/review/SKILL.md', skillMd('review'));
    const vanishing = box.file('skills/gone/SKILL.md', skillMd('gone'));
    // The package changes on disk while it is read: the file is really removed once the walk
    // has listed its folder (the folder's descriptor is closed after the listing) and before
    // the skill is read.
    let removed = false;
    const fs: PackageFs = {
      ...nodePackageFs,
      open: async (path, flags) => {
        const handle = await nodePackageFs.open(path, flags);
        if (removed || !path.endsWith('/skills/gone')) return handle;
        return {
          fd: handle.fd,
          stat: () => handle.stat(),
          read: (buffer, offset, length, position) => handle.read(buffer, offset, length, position),
          close: async () => {
            await handle.close();
            if (!removed) unlinkSync(vanishing);
            removed = true;
          },
        };
      },
    };
    const result = await validatePlugin(box.root, { fs });
    expect(removed).toBe(true);
    expect(result.skills).toEqual(['review']);
    expect(result.skippedSkills).toEqual(['gone']);
    expect(errorsAt(result.findings, 'skills/gone').map((f) => `${f.code} ${f.rule} ${f.path}`)).toEqual([
      'skill.skipped AR9O1 skills/gone/',
    ]);
  });
});
