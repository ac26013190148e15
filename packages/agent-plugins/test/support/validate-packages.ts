import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PackageFile } from '../../src/index.js';
import type { PluginSandbox } from './read-fixtures.js';

export const PLUGIN_100 = 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json';
export const PLUGIN_110 = 'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json';
export const MCP_100 = 'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json';
export const MCP_110 = 'https://agent-plugins.org/schemas/1.1.0/mcp.schema.json';

export const skillMd = (name: string, description = 'Reviews a change.') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`;
export const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const manifest100 = { $schema: PLUGIN_100, name: 'acme.tools', version: '1.2.0', description: 'Acme review tooling.' };

/** A valid 1.0.0 package: two skills, a bundled stdio server and a remote one. */
function valid100(box: PluginSandbox): void {
  box.file('plugin.json', json(manifest100));
  box.file('skills/review/SKILL.md', skillMd('review'));
  box.file('skills/review/scripts/run.sh', '#!/bin/sh\n');
  box.file('skills/deploy/SKILL.md', skillMd('deploy'));
  box.file('bin/server', '#!/bin/sh\nexec true\n');
  box.file(
    'mcp.json',
    json({
      $schema: MCP_100,
      mcpServers: {
        local: { type: 'stdio', command: './bin/server', args: ['serve'] },
        remote: { type: 'streamable-http', url: 'https://mcp.example.com/mcp' },
      },
    }),
  );
}

export interface PackageCase {
  name: string;
  /** Writes the package into the sandbox's plugin root. */
  make(box: PluginSandbox): void;
  rejected: boolean;
  skills: string[];
  servers: string[];
  mcpDisabled: boolean;
  /** Finding codes validation must report (among others). */
  codes: string[];
  /** Paths import must report (among others). */
  reported: string[];
}

/**
 * Packages on disk, each with what a conformant client loads from it. validatePlugin and
 * importPlugin both run on every one and must agree with the table and with each other.
 */
export const PACKAGE_CASES: readonly PackageCase[] = [
  {
    name: 'a valid 1.0.0 package',
    make: valid100,
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local', 'remote'],
    mcpDisabled: false,
    codes: [],
    reported: ['bin/server'],
  },
  {
    name: 'a valid 1.1.0 package with presentation',
    make: (box) => {
      box.file(
        'plugin.json',
        json({
          $schema: PLUGIN_110,
          name: 'acme.tools',
          presentation: { displayName: 'Acme Tools', icon: './icon.svg' },
          version: '2.0.0',
          description: 'd',
        }),
      );
      box.file('icon.svg', '<svg/>');
      box.file('skills/review/SKILL.md', skillMd('review'));
      box.file(
        'mcp.json',
        json({ $schema: MCP_110, mcpServers: { remote: { type: 'sse', url: 'https://mcp.example.com/sse' } } }),
      );
    },
    rejected: false,
    skills: ['review'],
    servers: ['remote'],
    mcpDisabled: false,
    codes: [],
    reported: ['icon.svg'],
  },
  {
    name: 'no plugin.json',
    make: (box) => box.file('skills/review/SKILL.md', skillMd('review')),
    rejected: true,
    skills: [],
    servers: [],
    mcpDisabled: false,
    codes: ['plugin.missing'],
    reported: ['plugin.json'],
  },
  {
    name: 'an unsupported $schema',
    make: (box) => {
      valid100(box);
      box.file(
        'plugin.json',
        json({ ...manifest100, $schema: 'https://agent-plugins.org/schemas/9.0.0/plugin.schema.json' }),
      );
    },
    rejected: true,
    skills: [],
    servers: [],
    mcpDisabled: false,
    codes: ['plugin.schema-unsupported'],
    reported: ['plugin.json'],
  },
  {
    name: 'plugin.json that is not JSON',
    make: (box) => box.file('plugin.json', '{ "name": '),
    rejected: true,
    skills: [],
    servers: [],
    mcpDisabled: false,
    codes: ['plugin.not-json'],
    reported: ['plugin.json'],
  },
  {
    name: 'an unknown top-level field (ignored, the plugin loads)',
    make: (box) => {
      valid100(box);
      box.file('plugin.json', json({ ...manifest100, colour: 'blue' }));
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local', 'remote'],
    mcpDisabled: false,
    codes: ['plugin.unknown-field'],
    reported: ['plugin.json#/colour'],
  },
  {
    name: 'mcp.json of another version (MCP off, the skills load)',
    make: (box) => {
      valid100(box);
      box.file('mcp.json', json({ $schema: MCP_110, mcpServers: { local: { type: 'stdio', command: 'npx' } } }));
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: [],
    mcpDisabled: true,
    codes: ['mcp.spec-mismatch'],
    reported: ['mcp.json'],
  },
  {
    name: 'mcp.json that is not JSON (MCP off)',
    make: (box) => {
      valid100(box);
      box.file('mcp.json', '{');
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: [],
    mcpDisabled: true,
    codes: ['mcp.not-json'],
    reported: ['mcp.json'],
  },
  {
    name: 'a skill with a bad name (that skill skipped)',
    make: (box) => {
      valid100(box);
      box.file('skills/Bad_Name/SKILL.md', skillMd('Bad_Name'));
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local', 'remote'],
    mcpDisabled: false,
    codes: ['skill.name-invalid'],
    reported: ['skills/Bad_Name/'],
  },
  {
    name: 'a SKILL.md linking outside the root (that skill skipped)',
    make: (box) => {
      valid100(box);
      box.dir('skills/leak');
      box.link('skills/leak/SKILL.md', join(box.outside, 'secret.txt'));
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local', 'remote'],
    mcpDisabled: false,
    codes: ['read.outside-root'],
    reported: ['skills/leak/'],
  },
  {
    name: 'skills itself a link outside the root (every skill off, MCP loads)',
    make: (box) => {
      box.file('plugin.json', json(manifest100));
      box.file('bin/server', '#!/bin/sh\n');
      box.file(
        'mcp.json',
        json({ $schema: MCP_100, mcpServers: { local: { type: 'stdio', command: './bin/server' } } }),
      );
      box.link('skills', box.outside);
    },
    rejected: false,
    skills: [],
    servers: ['local'],
    mcpDisabled: false,
    codes: ['read.outside-root'],
    reported: ['skills/'],
  },
  {
    name: 'a ./ command that is missing (a warning, the server loads)',
    make: (box) => {
      valid100(box);
      box.file('mcp.json', json({ $schema: MCP_100, mcpServers: { local: { type: 'stdio', command: './bin/x' } } }));
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local'],
    mcpDisabled: false,
    codes: ['mcp.command-not-bundled'],
    reported: [],
  },
  {
    name: 'a ./ command linking outside the root (that server skipped)',
    make: (box) => {
      valid100(box);
      box.link('bin/x', join(box.outside, 'secret.txt'));
      box.file(
        'mcp.json',
        json({
          $schema: MCP_100,
          mcpServers: {
            leak: { type: 'stdio', command: './bin/x' },
            local: { type: 'stdio', command: './bin/server' },
          },
        }),
      );
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local'],
    mcpDisabled: false,
    codes: ['read.outside-root'],
    reported: ['mcp.json#/mcpServers/leak', 'bin/x'],
  },
  {
    name: 'a cwd linking outside the root (that server skipped)',
    make: (box) => {
      valid100(box);
      box.link('data', box.outside);
      box.file(
        'mcp.json',
        json({ $schema: MCP_100, mcpServers: { local: { type: 'stdio', command: 'npx', cwd: './data' } } }),
      );
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: [],
    mcpDisabled: false,
    codes: ['read.outside-root'],
    reported: ['mcp.json#/mcpServers/local'],
  },
  {
    name: 'an unknown namespace folder (carried and reported)',
    make: (box) => {
      valid100(box);
      box.file('com.example.tool/settings.json', '{}\n');
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local', 'remote'],
    mcpDisabled: false,
    codes: [],
    reported: ['com.example.tool/'],
  },
  {
    name: 'a bundled file linking outside the root (denied, the rest loads)',
    make: (box) => {
      valid100(box);
      box.link('docs/leak.md', join(box.outside, 'secret.txt'));
    },
    rejected: false,
    skills: ['deploy', 'review'],
    servers: ['local', 'remote'],
    mcpDisabled: false,
    codes: ['read.outside-root'],
    reported: ['docs/leak.md'],
  },
];

/** Writes a package (or content root) file map to `root`, modes included. */
export async function writeTree(root: string, files: ReadonlyMap<string, PackageFile>): Promise<void> {
  for (const [path, file] of files) {
    const abs = join(root, path);
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, file.bytes);
    await chmod(abs, file.mode);
  }
}
