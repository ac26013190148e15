import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@agentproto/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type PluginConfig,
  buildPlugin,
  buildServers,
  importPlugin,
  readServers,
  validatePlugin,
  writePlugin,
} from '../../src/index.js';
import { type PluginSandbox, pluginSandbox } from '../support/read-fixtures.js';
import { MCP_100, PLUGIN_100, json, skillMd } from '../support/validate-packages.js';

// Agent Plugins 1.0.0 (reference/agent-plugins/1.0.0/spec.md) §7.2.1, stdio:
//   "The `command` field MUST contain a single executable token, not a shell command string.
//    It MUST be either a bare executable name or a plugin-relative path beginning with `./`.
//    Clients MUST resolve bare names using the platform's executable search rules and MUST
//    resolve plugin-relative paths against the plugin root."
// §11.1 item 7: "For stdio MCP servers, resolves `command` as a single executable token".
// The official conformance suite (agentplugins/agent-plugins-conformance, case
// mcp.stdio.command.single-token) ships `./bin/posix/probe token.sh` and
// `./bin/windows/probe token.cmd` and expects both entries to load.

const boxes: PluginSandbox[] = [];
const temp = tempDirs('ap-single-token-');
afterEach(async () => {
  await Promise.all(boxes.splice(0).map((box) => box.remove()));
  await temp.removeAll();
});
function sandbox(): PluginSandbox {
  const box = pluginSandbox();
  boxes.push(box);
  return box;
}
const tempDir = (): Promise<string> => temp.make();

const PROBE = '#!/bin/sh\nprintf "%s|" "$@"\n';
// The executables of the conformance fixture, and a file name with parentheses.
const TOKENS = ['./bin/posix/probe token.sh', './bin/windows/probe token.cmd', './bin/my(1).sh'] as const;

/** A 1.0.0 package whose servers each run one of TOKENS (and the bare `my(1).sh`), files in place. */
function tokenPackage(box: PluginSandbox): void {
  box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'conformance-core' }));
  box.file('skills/probe/SKILL.md', skillMd('probe'));
  for (const token of TOKENS) chmodSync(box.file(token.slice(2), PROBE), 0o755);
  box.file(
    'mcp.json',
    json({
      $schema: MCP_100,
      mcpServers: {
        'command-token-posix': { type: 'stdio', command: TOKENS[0], args: ['arg with spaces', '', 'literal-value'] },
        'command-token-windows': { type: 'stdio', command: TOKENS[1], args: ['arg with spaces', '', 'literal-value'] },
        parentheses: { type: 'stdio', command: TOKENS[2] },
        'bare-parentheses': { type: 'stdio', command: 'my(1).sh' },
      },
    }),
  );
}

describe('§7.2.1: a command is one token however many spaces its plugin-relative path holds', () => {
  it('readServers loads the single-token entries of the official conformance mcp.json (mcp.stdio.command.single-token)', () => {
    const read = readServers({
      $schema: MCP_100,
      mcpServers: {
        'command-token-posix': {
          type: 'stdio',
          command: './bin/posix/probe token.sh',
          args: ['arg with spaces', '', 'literal-value'],
        },
        'command-token-windows': {
          type: 'stdio',
          command: './bin/windows/probe token.cmd',
          args: ['arg with spaces', '', 'literal-value'],
        },
      },
    });
    expect(read.findings).toEqual([]);
    expect(Object.keys(read.servers)).toEqual(['command-token-posix', 'command-token-windows']);
    expect(read.servers['command-token-posix']).toEqual({
      type: 'stdio',
      command: './bin/posix/probe token.sh',
      args: ['arg with spaces', '', 'literal-value'],
    });
  });

  it('validatePlugin loads every server whose one-token command names a file of the package, and that token runs without a shell', async () => {
    const box = sandbox();
    tokenPackage(box);
    const result = await validatePlugin(box.root);
    expect(result.findings).toEqual([]);
    expect(result.servers).toEqual(['bare-parentheses', 'command-token-posix', 'command-token-windows', 'parentheses']);
    expect(result.skippedServers).toEqual([]);
    // "resolve plugin-relative paths against the plugin root": the whole value is one path,
    // launched without a shell, its args passed apart.
    const out = execFileSync(join(box.root, TOKENS[0]), ['arg with spaces', '', 'literal-value'], { encoding: 'utf8' });
    expect(out).toBe('arg with spaces||literal-value|');
  });

  it('importPlugin carries each single-token command into config.mcp, and a build packages it again', async () => {
    const box = sandbox();
    tokenPackage(box);
    const imported = await importPlugin(box.root);
    expect(imported.rejected).toBe(false);
    expect(imported.config?.mcp?.map((s) => [s.name, s.command])).toEqual([
      ['bare-parentheses', 'my(1).sh'],
      ['command-token-posix', './bin/posix/probe token.sh'],
      ['command-token-windows', './bin/windows/probe token.cmd'],
      ['parentheses', './bin/my(1).sh'],
    ]);
    // A build would refuse nothing of it: no "a build refuses this server" entry.
    expect(imported.report.filter((e) => e.path.startsWith('mcp.json'))).toEqual([]);
  });

  it('buildPlugin packages "./bin/posix/probe token.sh" and "./bin/my(1).sh" when the files are included, and the result validates', async () => {
    const box = sandbox();
    box.file('skills/probe/SKILL.md', skillMd('probe'));
    for (const token of TOKENS) chmodSync(box.file(token.slice(2), PROBE), 0o755);
    const config: PluginConfig = {
      name: 'conformance-core',
      include: ['bin/**'],
      mcp: [
        { name: 'command-token-posix', command: './bin/posix/probe token.sh', args: ['arg with spaces'] },
        { name: 'parentheses', command: '${PLUGIN_ROOT}/bin/my(1).sh' },
        { name: 'bare-parentheses', command: 'my(1).sh' },
      ],
    };
    const pkg = await buildPlugin(config, { contentRoot: box.root });
    expect(pkg.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    const mcp = JSON.parse(Buffer.from(pkg.files.get('mcp.json')?.bytes ?? []).toString('utf8'));
    expect(mcp.mcpServers).toEqual({
      'bare-parentheses': { type: 'stdio', command: 'my(1).sh' },
      'command-token-posix': { type: 'stdio', command: './bin/posix/probe token.sh', args: ['arg with spaces'] },
      parentheses: { type: 'stdio', command: './bin/my(1).sh' },
    });
    const out = join(await tempDir(), 'plugin');
    await writePlugin(pkg.files, out);
    expect((await validatePlugin(out)).servers).toEqual(['bare-parentheses', 'command-token-posix', 'parentheses']);
  });
});

describe('§7.2.1: "not a shell command string" is decided by the package, never by splitting', () => {
  const FILES = new Set(['bin/server', 'bin/probe token.sh']);

  it.each([
    ['a "./" path with arguments appended, naming no file', './bin/server --stdio'],
    ['a "./" path with a shell operator, naming no file', './bin/server;rm'],
    ['a bare name with arguments', 'npx -y @acme/server'],
    ['a bare name with a shell operator', 'server|tee'],
  ])('%s is not one token: mcp.command-invalid, the server is not packaged', (_what, command) => {
    const built = buildServers(
      [
        { name: 's', command },
        { name: 'ok', command: './bin/probe token.sh' },
      ],
      { files: FILES },
    );
    expect(Object.keys(built.servers)).toEqual(['ok']);
    expect(built.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'mcp.command-invalid error mcp.json#/mcpServers/s/command',
    ]);
  });

  it('a "./" path without spaces that names no file is one token for a missing file: a warning, and it is packaged', () => {
    const built = buildServers([{ name: 's', command: './bin/missing' }], { files: FILES });
    expect(Object.keys(built.servers)).toEqual(['s']);
    expect(built.findings.map((f) => `${f.code} ${f.severity}`)).toEqual(['mcp.command-not-bundled warning']);
  });

  it('validatePlugin skips a server whose "./" command is a command line naming no file, with an error at the entry; the others load', async () => {
    const box = sandbox();
    box.file('plugin.json', json({ $schema: PLUGIN_100, name: 'p' }));
    chmodSync(box.file('bin/server', PROBE), 0o755);
    box.file(
      'mcp.json',
      json({
        $schema: MCP_100,
        mcpServers: {
          line: { type: 'stdio', command: './bin/server --stdio' },
          ok: { type: 'stdio', command: './bin/server' },
        },
      }),
    );
    const result = await validatePlugin(box.root);
    expect(result.servers).toEqual(['ok']);
    expect(result.skippedServers).toEqual(['line']);
    expect(result.findings.map((f) => `${f.code} ${f.severity} ${f.path}`)).toEqual([
      'mcp.command-invalid error mcp.json#/mcpServers/line/command',
    ]);
  });
});
