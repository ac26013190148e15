import { access, chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPluginConfig, readPackageFiles } from '@agentproto/agent-plugins';
import { run, runJson } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();

const SKILL = (name: string) => `---\nname: ${name}\ndescription: Does ${name}.\n---\n# ${name}\n`;

const CONFIG = `[plugin]
name = "acme.tools"
version = "1.2.0"
description = "Acme review tooling."
spec = "1.1.0"
include = ["bin/**"]

[plugin.presentation]
displayName = "Acme Tools"

[[plugin.mcp]]
name = "local"
command = "./bin/server"
args = ["serve", "--store", "\${PLUGIN_ROOT}"]

[[plugin.mcp]]
name = "web"
transport = "http"
url = "https://mcp.example.com/mcp"
`;

/** A project: plugin.toml beside its content root (skills, bin/server). Returns the config path and a fresh output path. */
async function project(config = CONFIG): Promise<{ config: string; out: string; root: string }> {
  const root = await scratch();
  const files: Record<string, string> = {
    'plugin.toml': config,
    'skills/review/SKILL.md': SKILL('review'),
    'skills/review/references/checklist.md': 'Check it.\n',
    'bin/server': '#!/bin/sh\necho serve\n',
    'notes.md': 'not shipped\n',
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  await chmod(join(root, 'bin/server'), 0o755);
  return { config: join(root, 'plugin.toml'), out: join(await scratch(), 'acme.tools'), root };
}

async function built(): Promise<{ config: string; out: string; root: string }> {
  const p = await project();
  const outcome = await run(['plugin', 'build', p.config, '--out', p.out]);
  expect(outcome.code).toBe(0);
  return p;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const asText = (files: ReadonlyMap<string, Uint8Array>) =>
  [...files].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]).sort();
const FINDING_LINE = /^(error|warning|info) AR9O[0-5] [a-z0-9.-]+ \S+: .+$/;

describe('agentproto plugin', () => {
  it('build writes the package; validate finds nothing; verify passes, then names an edited file and exits 1', async () => {
    const { config, out } = await project();
    const build = await run(['plugin', 'build', config, '--out', out]);
    expect(build).toMatchObject({ code: 0, stderr: '' });
    expect(build.stdout).toBe(`${out}: 6 files, Agent Plugins 1.1.0\n`);
    expect([...(await readPackageFiles(out)).keys()].sort()).toEqual([
      '.agentproto-generated.json',
      'bin/server',
      'mcp.json',
      'plugin.json',
      'skills/review/SKILL.md',
      'skills/review/references/checklist.md',
    ]);
    expect((await stat(join(out, 'bin/server'))).mode & 0o777).toBe(0o755);

    const validate = await run(['plugin', 'validate', out]);
    expect(validate).toEqual({
      code: 0,
      stdout: `${out}: Agent Plugins 1.1.0, 1 skill, 2 servers, 0 findings\n`,
      stderr: '',
    });

    expect(await run(['plugin', 'verify', config, out])).toEqual({
      code: 0,
      stdout: `${out}: up to date\n`,
      stderr: '',
    });

    await writeFile(join(out, 'skills/review/references/checklist.md'), 'Edited by hand.\n');
    const drifted = await run(['plugin', 'verify', config, out]);
    expect(drifted.code).toBe(1);
    expect(drifted.stdout).toBe(
      'changed  skills/review/references/checklist.md\nedited  skills/review/references/checklist.md\n',
    );
    expect(drifted.stderr).toBe(
      `agentproto: ${out} is not what ${config} builds: 1 changed, 1 edited\nhint: build it again: agentproto plugin build ${config} --out ${out} --replace\n`,
    );
  });

  it('verify reports a removed file as missing and another --spec as drift', async () => {
    const { config, out } = await built();
    const otherSpec = await run(['plugin', 'verify', config, out, '--spec', '1.0.0']);
    expect(otherSpec.code).toBe(1);
    expect(otherSpec.stdout).toContain('changed  plugin.json');
    await rm(join(out, 'mcp.json'));
    const verdict = await runJsonFailing(['plugin', 'verify', config, out]);
    expect(verdict).toMatchObject({ ok: false, missing: ['mcp.json'], changed: [], unexpected: [], edited: [] });
  });

  it('build prints each finding on stderr, one line each, still writes what a client loads, and exits 1 for what it left out', async () => {
    const { config, out, root } = await project();
    await mkdir(join(root, 'skills/broken'), { recursive: true });
    await writeFile(join(root, 'skills/broken/SKILL.md'), SKILL('other'));
    const outcome = await run(['plugin', 'build', config, '--out', out]);
    // A skill was left out: the package is written, and the command says it is incomplete.
    expect(outcome.code).toBe(1);
    const lines = outcome.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines.slice(0, -2)) expect(line).toMatch(FINDING_LINE);
    expect(lines.at(-2)).toMatch(
      /^agentproto: PLUGIN_INCOMPLETE: .*: 1 configured part was left out \(AR9O1 skill\.name-mismatch skills\/broken\/SKILL\.md#\/frontmatter\/name\); the package records it in \.agentproto-generated\.json$/,
    );
    expect(lines.at(-1)).toBe("hint: 'agentproto plugin explain skill.name-mismatch' says what the rule asks");
    expect(outcome.stderr).toMatch(/^error AR9O1 skill\.name-mismatch skills\/broken\/SKILL\.md/m);
    expect(await exists(join(out, 'skills/broken'))).toBe(false);
    expect(await exists(join(out, 'skills/review/SKILL.md'))).toBe(true);
  });

  it('build of a plugin a client would reject exits 1 and writes nothing', async () => {
    const { config, out } = await project(CONFIG.replace('name = "acme.tools"', 'name = "Acme Tools"'));
    const outcome = await run(['plugin', 'build', config, '--out', out]);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/^error AR9O0 plugin\.name-invalid plugin\.json#\/name: /m);
    expect(outcome.stderr).toContain(
      `agentproto: PLUGIN_REJECTED: ${config}: a conformant client rejects the plugin (AR9O0 plugin.name-invalid plugin.json#/name); nothing was written\n`,
    );
    expect(await exists(out)).toBe(false);

    const json = await run(['plugin', 'build', config, '--out', out, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      out,
      rejected: true,
      written: false,
      findings: [{ code: 'plugin.name-invalid', rule: 'AR9O0', severity: 'error' }],
    });
    expect(await exists(out)).toBe(false);
  });

  it('build refuses a non-empty --out unless --replace; a bad configuration exits 1 with its code', async () => {
    const { config, out } = await built();
    const again = await run(['plugin', 'build', config, '--out', out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^agentproto: PLUGIN_WRITE_FAILED: .*exists and is not empty/);
    expect((await run(['plugin', 'build', config, '--out', out, '--replace'])).code).toBe(0);

    const bad = await project(CONFIG.replace('name = "acme.tools"\n', 'name = "acme.tools"\ncolour = "blue"\n'));
    const invalid = await run(['plugin', 'build', bad.config, '--out', bad.out]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(
      /^agentproto: PLUGIN_CONFIG_INVALID: .*plugin\.toml: colour is not a plugin setting\n$/,
    );
    const missing = await run(['plugin', 'verify', join(bad.out, 'nope.toml'), bad.out]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('CLI_PATH_NOT_FOUND');
  });

  it('validate --strict exits 2 naming the first error finding; without --strict a package that loads exits 0', async () => {
    const { out } = await built();
    await mkdir(join(out, 'skills/broken'), { recursive: true });
    await writeFile(join(out, 'skills/broken/SKILL.md'), SKILL('other'));

    const lenient = await run(['plugin', 'validate', out]);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toMatch(/^error AR9O1 skill\.name-mismatch skills\/broken\/SKILL\.md#?\S*: /m);
    // The skipped skill is counted beside the loaded one (§7.1: the client SHOULD report the invalid skill).
    expect(lenient.stdout).toContain('1 skill (1 skipped),');

    const strict = await run(['plugin', 'validate', out, '--strict']);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(
      /^agentproto: AR9O1: skill\.name-mismatch skills\/broken\/SKILL\.md\S*: .+ \(validate --strict fails on any error finding\)\n$/m,
    );
    expect(strict.stderr).not.toContain('Usage:');

    const strictJson = await run(['plugin', 'validate', out, '--strict', '--json']);
    expect(strictJson.code).toBe(2);
    expect(JSON.parse(strictJson.stdout)).toMatchObject({
      dir: out,
      rejected: false,
      skills: ['review'],
      findings: [{ code: 'skill.name-mismatch', severity: 'error' }],
    });

    // Warnings alone do not fail --strict.
    const clean = await built();
    await writeFile(
      join(clean.out, 'plugin.json'),
      (await readFile(join(clean.out, 'plugin.json'), 'utf8')).replace('{', '{\n  "colour": "blue",'),
    );
    const warned = await run(['plugin', 'validate', clean.out, '--strict']);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(/^warning AR9O0 plugin\.unknown-field plugin\.json#\/colour: /);
  });

  it('validate of a rejected package exits 1 (2 with --strict)', async () => {
    const { out } = await built();
    await writeFile(join(out, 'plugin.json'), '{ not json');
    const outcome = await run(['plugin', 'validate', out]);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/^error AR9O0 /m);
    expect(outcome.stderr).toMatch(
      new RegExp(
        `^agentproto: PLUGIN_REJECTED: ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: a conformant client rejects the plugin`,
        'm',
      ),
    );
    const json = await run(['plugin', 'validate', out, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ rejected: true, skills: [], servers: [] });
    expect((await run(['plugin', 'validate', out, '--strict'])).code).toBe(2);
    expect((await run(['plugin', 'validate', join(out, 'absent')])).code).toBe(1);
  });

  it('explains an AR9O rule and a finding code; an unknown code exits 2', async () => {
    expect(await run(['plugin', 'validate', '--explain', 'AR9O3'])).toEqual({
      code: 0,
      stdout: 'AR9O3: an unsupported ${VAR} placeholder\n',
      stderr: '',
    });
    expect(await run(['plugin', 'explain', 'AR9O3'])).toEqual({
      code: 0,
      stdout: 'AR9O3: an unsupported ${VAR} placeholder\n',
      stderr: '',
    });
    const code = await run(['plugin', 'explain', 'skill.name-mismatch']);
    expect(code.code).toBe(0);
    expect(code.stdout).toMatch(
      /^skill\.name-mismatch: AR9O1 \(error\): name must equal the name of the skill directory/,
    );
    expect(await runJson(['plugin', 'validate', '--explain', 'mcp.placeholder-rejected'])).toMatchObject({
      code: 'mcp.placeholder-rejected',
      rule: 'AR9O3',
      severity: 'error',
    });
    expect(await runJson(['plugin', 'explain', 'AR9O0'])).toEqual({
      code: 'AR9O0',
      rule: 'AR9O0',
      text: expect.stringContaining('plugin.json is missing or invalid'),
    });

    for (const argv of [
      ['plugin', 'explain', 'AR9O9'],
      ['plugin', 'validate', '--explain', 'nope'],
    ]) {
      const unknown = await run(argv);
      expect(unknown.code).toBe(2);
      expect(unknown.stdout).toBe('');
      expect(unknown.stderr).toMatch(/^agentproto: unknown code "(AR9O9|nope)": give an AR9O rule/);
    }
  });

  it('import writes the content and plugin.config.json; building from that configuration gives the same bytes', async () => {
    const { out } = await built();
    const imported = join(await scratch(), 'imported');
    const outcome = await run(['plugin', 'import', out, '--out', imported]);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout).toContain('report  bin/server: a bundled root file');
    expect(outcome.stdout).toMatch(/: 3 files and plugin\.config\.json\n$/);

    const text = await readFile(join(imported, 'plugin.config.json'), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(JSON.parse(text)).toMatchObject({ name: 'acme.tools', spec: '1.1.0', include: ['bin/server'] });
    const loaded = await loadPluginConfig(join(imported, 'plugin.config.json'));
    expect(loaded.contentRoot).toBe(imported);
    // The provenance header is taken off: the content is the source, not the package.
    expect(await readFile(join(imported, 'skills/review/SKILL.md'), 'utf8')).toBe(SKILL('review'));

    const rebuilt = join(await scratch(), 'rebuilt');
    expect((await run(['plugin', 'build', join(imported, 'plugin.config.json'), '--out', rebuilt])).code).toBe(0);
    expect(asText(await readPackageFiles(rebuilt))).toEqual(asText(await readPackageFiles(out)));
    expect((await stat(join(rebuilt, 'bin/server'))).mode & 0o777).toBe(0o755);
    expect((await run(['plugin', 'verify', join(imported, 'plugin.config.json'), out])).code).toBe(0);
  });

  it('import refuses a rejected package and a package bundling its own plugin.config.json; nothing is written', async () => {
    const { out } = await built();
    await writeFile(join(out, 'plugin.config.json'), '{}\n');
    const target = join(await scratch(), 'imported');
    const clash = await run(['plugin', 'import', out, '--out', target]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('bundles a root file named plugin.config.json');
    expect(await exists(target)).toBe(false);

    await writeFile(join(out, 'plugin.json'), '[]');
    const refused = await run(['plugin', 'import', out, '--out', target, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ rejected: true, config: null, configFile: null, files: [] });
    expect(refused.stderr).toContain('PLUGIN_REJECTED');
    expect(refused.stderr).toContain('nothing was imported');
    expect(await exists(target)).toBe(false);
  });

  it('emit --spec 1.0.0 converts a 1.1.0 configuration, leaving presentation out with a finding', async () => {
    const { config } = await project();
    const out = join(await scratch(), 'emit', 'acme.tools');
    const human = await run(['plugin', 'emit', config, '--out', out, '--spec', '1.0.0']);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`${out}: 6 files, Agent Plugins 1.0.0\n`);
    expect(human.stderr).toMatch(/^warning AR9O0 plugin\.unknown-field plugin\.json#\/presentation: /);
    const manifest = JSON.parse(await readFile(join(out, 'plugin.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.$schema).toBe('https://agent-plugins.org/schemas/1.0.0/plugin.schema.json');
    expect(manifest.presentation).toBeUndefined();
    expect(JSON.parse(await readFile(join(out, 'mcp.json'), 'utf8')).$schema).toBe(
      'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json',
    );
    expect(await runJson(['plugin', 'validate', out])).toMatchObject({ spec: '1.0.0', rejected: false, findings: [] });

    expect((await run(['plugin', 'emit', config, '--out', out])).code).toBe(1);
    const replaced = await runJson(['plugin', 'emit', config, '--out', out, '--replace']);
    expect(replaced).toMatchObject({
      out,
      spec: '1.1.0',
      rejected: false,
      written: true,
      findings: [],
      validation: { rejected: false, findings: [], skills: ['review'], servers: ['local', 'web'] },
    });

    const rejectedProject = await project(CONFIG.replace('name = "acme.tools"', 'name = "Acme Tools"'));
    const rejected = await run(['plugin', 'emit', rejectedProject.config, '--out', rejectedProject.out, '--json']);
    expect(rejected.code).toBe(1);
    expect(JSON.parse(rejected.stdout)).toMatchObject({
      rejected: true,
      written: false,
      findings: [{ code: 'plugin.name-invalid' }],
    });
    expect(await exists(rejectedProject.out)).toBe(false);
  });

  it('--json prints exactly one JSON document for every subcommand, findings included', async () => {
    const { config, out } = await project();
    const build = await run(['plugin', 'build', config, '--out', out, '--json']);
    expect(build.code).toBe(0);
    expect(build.stderr).toBe('');
    expect(JSON.parse(build.stdout)).toMatchObject({
      out,
      spec: '1.1.0',
      rejected: false,
      written: true,
      findings: [],
    });
    expect((JSON.parse(build.stdout) as { files: string[] }).files).toContain('plugin.json');

    expect(await runJson(['plugin', 'validate', out])).toEqual({
      dir: out,
      spec: '1.1.0',
      rejected: false,
      findings: [],
      skills: ['review'],
      servers: ['local', 'web'],
      mcpDisabled: false,
      skippedSkills: [],
      skippedServers: [],
    });
    expect(await runJson(['plugin', 'verify', config, out])).toEqual({
      dir: out,
      ok: true,
      changed: [],
      missing: [],
      unexpected: [],
      edited: [],
      omitted: [],
    });
    const imported = await runJson<{
      config: Record<string, unknown>;
      files: string[];
      report: unknown[];
      findings: unknown[];
      configFile: string;
    }>(['plugin', 'import', out, '--out', join(await scratch(), 'imported')]);
    expect(imported.config).toMatchObject({ name: 'acme.tools' });
    expect(imported.files).toEqual(['bin/server', 'skills/review/SKILL.md', 'skills/review/references/checklist.md']);
    expect(imported.findings).toEqual([]);
    expect(JSON.parse(await readFile(imported.configFile, 'utf8'))).toEqual(imported.config);
    const emitted = await runJson<{ files: string[] }>([
      'plugin',
      'emit',
      config,
      '--out',
      join(await scratch(), 'emitted'),
    ]);
    expect(emitted.files).toContain('mcp.json');
    expect(await runJson(['plugin', 'explain', 'AR9O3'])).toMatchObject({ code: 'AR9O3' });

    await writeFile(join(out, 'plugin.json'), '{}');
    const drift = await run(['plugin', 'verify', config, out, '--json']);
    expect(drift.code).toBe(1);
    expect(JSON.parse(drift.stdout)).toMatchObject({ ok: false, changed: ['plugin.json'], edited: ['plugin.json'] });
  });

  it('plugin --help prints the usage with every plugin command', async () => {
    for (const argv of [
      ['plugin', '--help'],
      ['plugin', 'frobnicate', '-h'],
      ['help', 'plugin'],
    ]) {
      const outcome = await run(argv);
      expect(outcome.code).toBe(0);
      for (const command of [
        'build <config>',
        'validate <dir>',
        'verify <config> <dir>',
        'import <dir>',
        'emit <config>',
        'explain <code>',
        '--strict',
        '--explain CODE',
        '--spec VERSION',
      ]) {
        expect(outcome.stdout).toContain(command);
      }
    }
  });

  it.each([
    { argv: ['plugin'], message: 'plugin needs a subcommand' },
    { argv: ['plugin', 'publish', 'x'], message: 'unknown command "plugin publish"' },
    { argv: ['plugin', 'build', 'plugin.toml'], message: 'plugin build needs --out DIR' },
    { argv: ['plugin', 'build', '--out', 'x'], message: 'plugin build takes a configuration file' },
    { argv: ['plugin', 'build', 'a.toml', 'b.toml', '--out', 'x'], message: 'plugin build takes a configuration file' },
    {
      argv: ['plugin', 'build', 'a.toml', '--out', 'x', '--spec', '2.0.0'],
      message: 'plugin build: --spec must be one of 1.0.0, 1.1.0, not "2.0.0"',
    },
    { argv: ['plugin', 'build', 'a.toml', '--out='], message: 'plugin build: --out must not be empty' },
    {
      argv: ['plugin', 'build', 'a.toml', '--out', 'x', '--insecure-http'],
      message: 'plugin build takes no --insecure-http: it is an option of plugin push and pull',
    },
    { argv: ['plugin', 'validate'], message: 'plugin validate takes a plugin folder' },
    {
      argv: ['plugin', 'validate', 'dir', '--spec', '1.0.0'],
      message: 'plugin validate takes no --spec: it is an option of plugin build, verify and emit',
    },
    {
      argv: ['plugin', 'validate', 'dir', '--explain', 'AR9O3'],
      message: 'plugin validate --explain CODE takes no folder',
    },
    {
      argv: ['plugin', 'validate', '--explain'],
      message: 'plugin validate: --explain needs a value (CODE)',
    },
    {
      argv: ['plugin', 'verify', 'plugin.toml'],
      message: 'plugin verify takes a configuration file and a plugin folder',
    },
    {
      argv: ['plugin', 'verify', 'plugin.toml', 'dir', '--out', 'x'],
      message: 'plugin verify takes no --out: it is an option of plugin build, import and emit',
    },
    { argv: ['plugin', 'import', 'dir'], message: 'plugin import needs --out DIR' },
    {
      argv: ['plugin', 'import', 'dir', '--out', 'x', '--spec', '1.0.0'],
      message: 'plugin import takes no --spec: it is an option of plugin build, verify and emit',
    },
    { argv: ['plugin', 'emit', '--out', 'x'], message: 'plugin emit takes a configuration file' },
    { argv: ['plugin', 'explain'], message: 'plugin explain takes one code' },
    { argv: ['plugin', 'explain', 'AR9O1', 'AR9O2'], message: 'plugin explain takes one code' },
  ])('a wrong command line exits 2 before doing anything: $argv', async ({ argv, message }) => {
    const outcome = await run(argv);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    const [line, ...rest] = outcome.stderr.split('\n');
    expect(line).toContain(`agentproto: ${message}`);
    // What was probably meant, when something is near; then the subcommand's help.
    if (rest[0]?.startsWith('Did you mean')) rest.shift();
    const named = ['build', 'validate', 'verify', 'import', 'emit', 'explain'].includes(argv[1]!) ? ` ${argv[1]}` : '';
    expect(rest).toEqual([`Run 'agentproto plugin${named} --help' for usage.`, '']);
  });
});

/** Runs a `--json` command expected to exit 1 and returns its one JSON document. */
async function runJsonFailing(argv: string[]): Promise<Record<string, unknown>> {
  const outcome = await run([...argv, '--json']);
  expect(outcome.code).toBe(1);
  return JSON.parse(outcome.stdout) as Record<string, unknown>;
}

describe('agentproto plugin init', () => {
  it('writes a project that builds and validates with no finding, and refuses a folder that is not empty', async () => {
    const dir = join(await scratch(), 'acme.tools');
    const init = await run(['plugin', 'init', dir]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout.split('\n')[0]).toBe(`${dir}: wrote plugin.toml, skills/hello/SKILL.md`);
    const built = await run(['plugin', 'build', join(dir, 'plugin.toml'), '--out', join(dir, 'dist'), '--strict']);
    expect(built).toMatchObject({ code: 0, stderr: '' });
    const validated = await run(['plugin', 'validate', join(dir, 'dist'), '--strict']);
    expect(validated).toMatchObject({ code: 0, stderr: '' });

    const again = await run(['plugin', 'init', dir, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ error: { code: 'CLI_INIT_NOT_EMPTY' } });
    expect(await run(['plugin', 'init', join(dir, 'plugin.toml')])).toMatchObject({
      code: 1,
      stderr: `agentproto: CLI_PATH_NOT_A_FOLDER: dir ${join(dir, 'plugin.toml')}: is a file, expected a folder\n`,
    });
  });

  it('--json is the list of files written', async () => {
    const dir = join(await scratch(), 'kit');
    expect(await runJson(['plugin', 'init', dir])).toEqual({ dir, files: ['plugin.toml', 'skills/hello/SKILL.md'] });
  });
});
