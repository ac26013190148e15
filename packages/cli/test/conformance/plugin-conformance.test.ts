import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../support/run.js';
import { scratchFolders } from '../support/scratch.js';

// The Agent Plugins rules `agentproto plugin` follows, quoted from
// reference/agent-plugins/1.0.0/spec.md and reference/agent-plugins/1.1.0-draft/spec.md.

const scratch = scratchFolders();

const PLUGIN_100 = 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json';
const PLUGIN_110 = 'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json';
const MCP_100 = 'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json';
const SKILL = (name: string) => `---\nname: ${name}\ndescription: Does ${name}.\n---\n# ${name}\n`;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

async function tree(files: Record<string, string>): Promise<string> {
  const root = await scratch();
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe('§7.2.1: "The command field MUST contain a single executable token, not a shell command string" (mcp.stdio.command.single-token)', () => {
  it('plugin build packages "./bin/posix/probe token.sh" and plugin validate loads it', async () => {
    const root = await tree({
      'plugin.toml': [
        '[plugin]',
        'name = "conformance-core"',
        'version = "1.0.0"',
        'description = "Single-token commands."',
        'include = ["bin/**"]',
        '',
        '[[plugin.mcp]]',
        'name = "command-token-posix"',
        'command = "./bin/posix/probe token.sh"',
        'args = ["arg with spaces", "", "literal-value"]',
        '',
        '[[plugin.mcp]]',
        'name = "parentheses"',
        'command = "./bin/my(1).sh"',
        '',
      ].join('\n'),
      'skills/probe/SKILL.md': SKILL('probe'),
      'bin/posix/probe token.sh': '#!/bin/sh\nexit 0\n',
      'bin/my(1).sh': '#!/bin/sh\nexit 0\n',
    });
    await chmod(join(root, 'bin/posix/probe token.sh'), 0o755);
    const out = join(await scratch(), 'conformance-core');
    const build = await run(['plugin', 'build', join(root, 'plugin.toml'), '--out', out]);
    expect(build).toMatchObject({ code: 0, stderr: '' });
    const mcp = JSON.parse(await readFile(join(out, 'mcp.json'), 'utf8'));
    expect(mcp.mcpServers['command-token-posix'].command).toBe('./bin/posix/probe token.sh');
    expect(mcp.mcpServers.parentheses.command).toBe('./bin/my(1).sh');
    const validate = await run(['plugin', 'validate', out, '--strict']);
    expect(validate).toEqual({
      code: 0,
      stdout: `${out}: Agent Plugins 1.0.0, 1 skill, 2 servers, 0 findings\n`,
      stderr: '',
    });
  });
});

describe('§4.1 item 4 and §7.2.2 item 3: "The client SHOULD report the invalid entry"', () => {
  it('plugin validate names a server whose command leaves the root through a link, counts it as skipped, and --strict fails on it', async () => {
    const outside = await tree({ 'secret.sh': '#!/bin/sh\n' });
    const root = await tree({
      'plugin.json': json({ $schema: PLUGIN_100, name: 'p' }),
      'skills/review/SKILL.md': SKILL('review'),
      'bin/server': '#!/bin/sh\n',
      'mcp.json': json({
        $schema: MCP_100,
        mcpServers: {
          local: { type: 'stdio', command: './bin/server' },
          probe: { type: 'stdio', command: './bin/probe' },
        },
      }),
    });
    await symlink(join(outside, 'secret.sh'), join(root, 'bin/probe'));
    const validate = await run(['plugin', 'validate', root]);
    expect(validate.code).toBe(0);
    expect(validate.stderr.split('\n')).toContainEqual(
      expect.stringMatching(
        /^error AR9O5 mcp\.server-path-refused mcp\.json#\/mcpServers\/probe\/command: .+ the server is skipped$/,
      ),
    );
    expect(validate.stdout).toBe(`${root}: Agent Plugins 1.0.0, 1 skill, 1 server (1 skipped), 2 findings\n`);
    const json100 = JSON.parse((await run(['plugin', 'validate', root, '--json'])).stdout);
    expect(json100.skippedServers).toEqual(['probe']);
    const strict = await run(['plugin', 'validate', root, '--strict']);
    expect(strict.code).toBe(2);
  });
});

describe('1.0.0 §5.2 ("Any schema violation other than … is fatal") and §8.1 against the 1.1.0 draft §5.2 ("Any manifest violation other than … is fatal")', () => {
  const files = (schema: string) => ({
    'plugin.json': json({ $schema: schema, name: 'p', extensions: { my_client: { on: true } } }),
    'skills/review/SKILL.md': SKILL('review'),
  });

  it('1.0.0: plugin validate loads the plugin and warns about the key that is not reverse-domain', async () => {
    const root = await tree(files(PLUGIN_100));
    const validate = await run(['plugin', 'validate', root]);
    expect(validate.code).toBe(0);
    expect(validate.stderr).toBe(
      'warning AR9O0 plugin.extension-namespace-ignored plugin.json#/extensions/my_client: is not a lower-case reverse-domain namespace such as com.example.client; no client implements it, so it is ignored\n',
    );
    expect(validate.stdout).toBe(`${root}: Agent Plugins 1.0.0, 1 skill, 0 servers, 1 finding\n`);
  });

  it('1.1.0: plugin validate rejects the plugin (exit 1, PLUGIN_REJECTED)', async () => {
    const root = await tree(files(PLUGIN_110));
    const validate = await run(['plugin', 'validate', root]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(
      /^error AR9O0 plugin\.extension-namespace-invalid plugin\.json#\/extensions\/my_client: .+\n/,
    );
    expect(validate.stderr).toMatch(/agentproto: PLUGIN_REJECTED: /);
  });
});
