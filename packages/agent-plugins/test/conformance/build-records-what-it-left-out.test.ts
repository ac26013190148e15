import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type PluginConfig,
  SIDECAR,
  buildPlugin,
  emitPlugin,
  importPlugin,
  validatePlugin,
  verifyPlugin,
  writePlugin,
} from '../../src/index.js';
import { parseSidecar } from '../../src/build/sidecar.js';

// The rules these tests are built from (reference/agent-plugins/1.0.0/spec.md):
// §7.2.2 item 3: "If an individual server entry does not satisfy the requirements in §7.2.1,
//   the client MUST skip that server and continue loading other servers and component types.
//   The client SHOULD report the invalid entry."
// §7.1 / §11.3 item 4: "Clients SHOULD report invalid configuration and component failures."
// A build applies those skips before shipping. What it skipped is recorded in the package's
// own build file (.agentproto-generated.json, a root file no client loads; §8's namespace
// rule is for client-specific files), so that validate and verify see the package is short.

const made: string[] = [];
afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-omitted-'));
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
const config: PluginConfig = {
  name: 'acme.tools',
  mcp: [
    { name: 'ok', command: 'npx', args: ['ok-mcp'] },
    { name: 'shell', command: 'npx ok-mcp && rm -rf /' },
    {
      name: 'remote',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { 'X-Api-Key': 'k7Qm2ZpX9vR4tL8wN3bY6cJ1' },
    },
  ],
};
const FILES = { 'skills/review/SKILL.md': SKILL('review'), 'skills/broken/SKILL.md': SKILL('other') };
const LEFT_OUT = [
  { code: 'secret.embedded-rejected', path: 'mcp.json#/mcpServers/remote/headers/X-Api-Key' },
  { code: 'mcp.command-invalid', path: 'mcp.json#/mcpServers/shell/command' },
  { code: 'skill.name-mismatch', path: 'skills/broken/SKILL.md#/frontmatter/name' },
];

describe('§7.2.2 item 3, §11.3 item 4: the package records what its build left out', () => {
  it('buildPlugin records every error in the sidecar; validatePlugin, importPlugin and verifyPlugin report each one', async () => {
    const root = await contentRoot(FILES);
    const pkg = await buildPlugin(config, { contentRoot: root });
    const sidecar = parseSidecar(pkg.files.get(SIDECAR)!.bytes);
    expect(sidecar?.omitted).toEqual(LEFT_OUT);
    const out = join(await scratch(), 'pkg');
    await writePlugin(pkg.files, out);

    const validation = await validatePlugin(out);
    expect(validation.servers).toEqual(['ok']);
    expect(validation.skills).toEqual(['review']);
    expect(
      validation.findings
        .filter((f) => f.code === 'package.build-omitted')
        .map((f) => [f.severity, f.rule, f.path, f.message]),
    ).toEqual(
      LEFT_OUT.map(({ code, path }) => [
        'error',
        'AR9O4',
        path,
        `was left out when the package was built (${code}); the build recorded it in ${SIDECAR}`,
      ]),
    );
    expect((await importPlugin(out)).findings.filter((f) => f.code === 'package.build-omitted')).toHaveLength(3);

    const verdict = await verifyPlugin(out, config, { contentRoot: root });
    expect(verdict).toMatchObject({
      ok: false,
      changed: [],
      missing: [],
      unexpected: [],
      edited: [],
      omitted: LEFT_OUT,
    });
  });

  it('a build that leaves nothing out records nothing, and verifies ok', async () => {
    const root = await contentRoot({ 'skills/review/SKILL.md': SKILL('review') });
    const clean: PluginConfig = { name: 'acme.tools', mcp: [{ name: 'ok', command: 'npx' }] };
    const pkg = await buildPlugin(clean, { contentRoot: root });
    expect(Buffer.from(pkg.files.get(SIDECAR)!.bytes).toString('utf8')).not.toContain('omitted');
    const out = join(await scratch(), 'pkg');
    await writePlugin(pkg.files, out);
    expect((await validatePlugin(out)).findings).toEqual([]);
    expect(await verifyPlugin(out, clean, { contentRoot: root })).toMatchObject({ ok: true, omitted: [] });
  });

  it('emitPlugin records what the first build left out, though the package it rebuilds from never held it', async () => {
    const root = await contentRoot(FILES);
    const out = join(await scratch(), 'emitted');
    const result = await emitPlugin(config, out, { contentRoot: root });
    expect(parseSidecar(await readFile(join(out, SIDECAR)))?.omitted).toEqual(LEFT_OUT);
    expect(result.validation.findings.filter((f) => f.code === 'package.build-omitted').map((f) => f.path)).toEqual(
      LEFT_OUT.map((e) => e.path),
    );
    // Listed once, under their own codes.
    expect(result.findings.filter((f) => f.code === 'package.build-omitted')).toEqual([]);
  });

  it('a hand-made record that is not a list of short codes and paths is not believed (no finding, no crash)', async () => {
    const root = await contentRoot({ 'skills/review/SKILL.md': SKILL('review') });
    const pkg = await buildPlugin({ name: 'acme.tools' }, { contentRoot: root });
    for (const omitted of [
      [{ code: 'x', path: 'a\u001b[2Jb' }],
      [{ code: 'x' }],
      'all',
      [{ code: 'x', path: 'p'.repeat(5000) }],
    ]) {
      const files = new Map(pkg.files);
      const record = {
        ...(JSON.parse(Buffer.from(pkg.files.get(SIDECAR)!.bytes).toString('utf8')) as object),
        omitted,
      };
      files.set(SIDECAR, { bytes: new TextEncoder().encode(JSON.stringify(record)), mode: 0o644 });
      const out = join(await scratch(), 'pkg');
      await writePlugin(files, out);
      const validation = await validatePlugin(out);
      expect(validation.findings.filter((f) => f.code === 'package.build-omitted')).toEqual([]);
    }
  });
});
