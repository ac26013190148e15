import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPlugin, loadPluginConfig, PLUGIN_CONFIG_SCHEMA } from '../src/index.js';

const REFERENCE = join(import.meta.dirname, '../CONFIGURATION.md');
const text = await readFile(REFERENCE, 'utf8');

/** Every fenced toml, yaml or json block of the reference, with the line it starts on. */
const examples = [...text.matchAll(/^```(toml|yaml|json)\n([\s\S]*?)^```$/gm)].map((match) => ({
  format: match[1]!,
  body: match[2]!,
  line: text.slice(0, match.index).split('\n').length,
}));

const made: string[] = [];
afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A project the examples can point at: a package.json to take a version from, a skill, a server binary. */
async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-reference-'));
  made.push(dir);
  const files: Record<string, string> = {
    'package.json': '{ "name": "acme-tools", "version": "1.2.0" }\n',
    'skills/review/SKILL.md': '---\nname: review\ndescription: Reviews a change.\n---\n# Review\n',
    'bin/acme-index': '#!/bin/sh\n',
    'content/skills/review/SKILL.md': '---\nname: review\ndescription: Reviews a change.\n---\n# Review\n',
    'content/shared/templates/report.md': '# Report\n',
    'content/bin/acme-index': '#!/bin/sh\n',
  };
  for (const [path, body] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), body);
  }
  return dir;
}

describe('the configuration reference (CONFIGURATION.md)', () => {
  it('has examples in all three formats', () => {
    expect(new Set(examples.map((example) => example.format))).toEqual(new Set(['toml', 'yaml', 'json']));
    expect(examples.length).toBeGreaterThanOrEqual(18);
  });

  it.each(examples.map((example) => [`${example.format} at line ${example.line}`, example] as const))(
    'the %s loads and builds',
    async (_, { format, body }) => {
      const dir = await project();
      const file = join(dir, `plugin.${format}`);
      await writeFile(file, body);
      const { config, contentRoot } = await loadPluginConfig(file);
      expect(config.name).toBe('acme.tools');
      const built = await buildPlugin(config, { contentRoot });
      expect(built.rejected).toBe(false);
      // The reference's examples are examples of what to write: nothing in them is an error.
      expect(built.findings.filter((finding) => finding.severity === 'error')).toEqual([]);
    },
  );

  it('names every key of the schema', () => {
    const keys = new Set<string>();
    const walk = (schema: unknown): void => {
      if (typeof schema !== 'object' || schema === null) return;
      const node = schema as Record<string, unknown>;
      if (typeof node.properties === 'object' && node.properties !== null)
        for (const key of Object.keys(node.properties)) keys.add(key);
      for (const [key, child] of Object.entries(node)) if (key !== 'if') walk(child);
    };
    walk(PLUGIN_CONFIG_SCHEMA);
    expect(keys.size).toBeGreaterThan(30);
    expect([...keys].filter((key) => !text.includes(`\`${key}\``))).toEqual([]);
  });
});
