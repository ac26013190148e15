import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type PluginConfig,
  PluginConfigError,
  SIDECAR,
  buildPlugin,
  loadPluginConfig,
  normalizePluginConfig,
} from '../src/index.js';
import { contentHash } from '../src/bundle/hash.js';
import { parseSidecar } from '../src/build/sidecar.js';
import { verifyPlugin, writePlugin } from '../src/write/index.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-runtimes-'));
  made.push(dir);
  return dir;
}

const SKILL = '---\nname: review\ndescription: Reviews a change.\n---\n# review\n';

async function source(extra: Record<string, string> = {}): Promise<string> {
  const root = await scratch();
  for (const [path, text] of Object.entries({
    'skills/review/SKILL.md': SKILL,
    'skills/review/scripts/run.sh': '#!/bin/sh\n',
    ...extra,
  })) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const text = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
const json = (bytes: Uint8Array | undefined): Record<string, unknown> =>
  JSON.parse(text(bytes)) as Record<string, unknown>;

const base = { name: 'acme.tools', version: '1.2.0', description: 'Acme review tooling.' } satisfies PluginConfig;

/** Builds, writes to a fresh folder, and returns the folder with what was built. */
async function generate(config: PluginConfig, contentRoot: string, existingPackageJson?: Uint8Array) {
  const pkg = await buildPlugin(config, { contentRoot, existingPackageJson });
  const out = join(await scratch(), 'plugin');
  await writePlugin(pkg.files, out);
  return { pkg, out };
}

async function editJson(file: string, edit: (value: Record<string, unknown>) => void, indent = 2): Promise<void> {
  const value = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  edit(value);
  await writeFile(file, `${JSON.stringify(value, null, indent)}\n`);
}

const clean = { ok: true, changed: [], missing: [], unexpected: [], edited: [], omitted: [], packageJson: [] };

describe('the opencode runtime', () => {
  it('adds a root package.json the product owns, recorded in the sidecar', async () => {
    const contentRoot = await source();
    const config: PluginConfig = { ...base, runtimes: ['agent-plugins', 'opencode'] };
    const { pkg, out } = await generate(config, contentRoot);
    expect(pkg.findings).toEqual([]);
    const packageJson = pkg.files.get('package.json');
    expect(json(packageJson?.bytes)).toEqual({
      name: 'acme.tools',
      version: '1.2.0',
      description: 'Acme review tooling.',
      files: ['plugin.json', 'skills'],
      dependencies: { '@opencode/plugin': '^2.0.26' },
    });
    expect(packageJson?.mode).toBe(0o644);
    expect(parseSidecar(pkg.files.get(SIDECAR)!.bytes)?.files['package.json']).toBe(contentHash(packageJson!.bytes));
    expect([...pkg.files.keys()].at(-1)).toBe(SIDECAR);
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual(clean);
  });

  it.each([
    ['a derived field', (v: Record<string, unknown>) => (v.description = 'edited')],
    ['a dependency', (v: Record<string, unknown>) => (v.dependencies = { '@opencode/plugin': '^9.0.0' })],
    ['an added field', (v: Record<string, unknown>) => (v.scripts = { test: 'x' })],
  ])('reports a hand edit of %s as drift of the whole file', async (_, edit) => {
    const contentRoot = await source();
    const config: PluginConfig = { ...base, runtimes: ['opencode'] };
    const { out } = await generate(config, contentRoot);
    await editJson(join(out, 'package.json'), edit);
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual({
      ok: false,
      changed: ['package.json'],
      missing: [],
      unexpected: [],
      edited: ['package.json'],
      omitted: [],
      packageJson: ['package.json'],
    });
  });

  it('reports a whitespace-only edit too: the file is compared byte for byte', async () => {
    const contentRoot = await source();
    const config: PluginConfig = { ...base, runtimes: ['opencode'] };
    const { out } = await generate(config, contentRoot);
    await editJson(join(out, 'package.json'), () => undefined, 4);
    expect(await verifyPlugin(out, config, { contentRoot })).toMatchObject({
      ok: false,
      changed: ['package.json'],
      packageJson: ['package.json'],
    });
  });

  it("honours package_manager and opencode_dependency from the seed's TOML", async () => {
    const contentRoot = await source();
    const file = join(contentRoot, 'plugin.toml');
    await writeFile(
      file,
      '[plugin]\nname = "acme.tools"\nversion = "1.2.0"\ndescription = "Acme review tooling."\nruntimes = ["opencode"]\npackage_manager = "pnpm@9.15.0"\nopencode_dependency = "^2.1.0"\n',
    );
    const loaded = await loadPluginConfig(file);
    expect(loaded.config.runtimes).toEqual(['opencode']);
    const pkg = await buildPlugin(loaded.config, { contentRoot: await source() });
    const packageJson = json(pkg.files.get('package.json')?.bytes);
    expect(packageJson.dependencies).toEqual({ '@opencode/plugin': '^2.1.0' });
    expect(packageJson.packageManager).toBe('pnpm@9.15.0');
    expect(Object.keys(packageJson).at(-1)).toBe('packageManager');
  });
});

describe('the pi runtime', () => {
  it('copies the skills to the default .pi/skills, which pi.skills names and files lists', async () => {
    const contentRoot = await source();
    const config: PluginConfig = { ...base, runtimes: ['pi'] };
    const { pkg, out } = await generate(config, contentRoot);
    expect(pkg.findings).toEqual([]);
    const packageJson = json(pkg.files.get('package.json')?.bytes);
    expect(packageJson.pi).toEqual({ skills: ['./.pi/skills'] });
    expect(packageJson.files).toEqual(['.pi', 'plugin.json', 'skills']);
    expect(packageJson).not.toHaveProperty('dependencies');
    for (const path of ['SKILL.md', 'scripts/run.sh']) {
      expect(text(pkg.files.get(`.pi/skills/review/${path}`)?.bytes)).toBe(
        text(pkg.files.get(`skills/review/${path}`)?.bytes),
      );
    }
    expect(await readFile(join(out, '.pi/skills/review/SKILL.md'), 'utf8')).toContain('# review');
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual(clean);
  });

  it('reuses the skills tree when skills_dir is skills, and copies to any other folder', async () => {
    const contentRoot = await source();
    const reuse = await buildPlugin({ ...base, runtimes: ['pi'], pi: { skillsDir: './skills/' } }, { contentRoot });
    expect(json(reuse.files.get('package.json')?.bytes).pi).toEqual({ skills: ['./skills'] });
    expect([...reuse.files.keys()].filter((path) => path.includes('review/SKILL.md'))).toEqual([
      'skills/review/SKILL.md',
    ]);

    const other = await buildPlugin({ ...base, runtimes: ['pi'], pi: { skillsDir: 'pi/skills' } }, { contentRoot });
    expect(json(other.files.get('package.json')?.bytes).pi).toEqual({ skills: ['./pi/skills'] });
    expect(other.files.has('pi/skills/review/scripts/run.sh')).toBe(true);
    expect(other.files.has('.pi/skills/review/SKILL.md')).toBe(false);
  });

  it.each([
    ['../out', 'contains a ".." segment'],
    ['plugin.json', 'meets a file the package already has'],
    ['tools', 'meets a file the package already has'],
    ['skills/pi', 'lies inside the skills tree'],
  ])('writes .pi/skills instead of the unusable skills_dir %j, and says why', async (skillsDir, why) => {
    const contentRoot = await source({ 'tools/x.txt': 'x\n' });
    const pkg = await buildPlugin(
      { ...base, include: ['tools/**'], runtimes: ['pi'], pi: { skillsDir } },
      { contentRoot },
    );
    expect(pkg.findings.map((f) => [f.code, f.path, f.message])).toEqual([
      ['runtime.pi-skills-dir-invalid', 'plugin#/pi/skillsDir', `skills_dir ${why}; .pi/skills was written instead`],
    ]);
    expect(json(pkg.files.get('package.json')?.bytes).pi).toEqual({ skills: ['./.pi/skills'] });
    expect(pkg.files.has('.pi/skills/review/SKILL.md')).toBe(true);
  });

  it('falls back to the skills tree when an included file takes .pi as well', async () => {
    const contentRoot = await source({ '.pi/skills/notes.md': 'mine\n' });
    const pkg = await buildPlugin({ ...base, include: ['.pi/**'], runtimes: ['pi'] }, { contentRoot });
    expect(pkg.findings.map((f) => f.message)).toEqual([
      'the default .pi/skills meets a file the package already has; skills was written instead',
    ]);
    expect(json(pkg.files.get('package.json')?.bytes).pi).toEqual({ skills: ['./skills'] });
    expect(text(pkg.files.get('.pi/skills/notes.md')?.bytes)).toBe('mine\n');
  });
});

describe('the pi runtime with package_json = "merge"', () => {
  const config: PluginConfig = { ...base, runtimes: ['pi'], pi: { packageJson: 'merge' } };
  const existing = Buffer.from(
    `${JSON.stringify(
      {
        name: 'old-name',
        private: true,
        version: '0.0.1',
        scripts: { test: 'vitest' },
        devDependencies: { vitest: '^4.0.0' },
        packageManager: 'pnpm@9.15.0',
      },
      null,
      2,
    )}\n`,
  );

  it("keeps the project's keys and their places, and updates the owned ones", async () => {
    const pkg = await buildPlugin(config, { contentRoot: await source(), existingPackageJson: existing });
    const packageJson = pkg.files.get('package.json');
    expect(Object.keys(json(packageJson?.bytes))).toEqual([
      'name',
      'private',
      'version',
      'description',
      'files',
      'pi',
      'scripts',
      'devDependencies',
      'packageManager',
    ]);
    expect(json(packageJson?.bytes)).toMatchObject({
      name: 'acme.tools',
      version: '1.2.0',
      scripts: { test: 'vitest' },
      devDependencies: { vitest: '^4.0.0' },
      packageManager: 'pnpm@9.15.0',
      pi: { skills: ['./.pi/skills'] },
    });
    expect(parseSidecar(pkg.files.get(SIDECAR)!.bytes)?.files['package.json']).toBe(contentHash(packageJson!.bytes));
  });

  it("does not report hand edits of the project's keys, in changed or edited", async () => {
    const contentRoot = await source();
    const { out } = await generate(config, contentRoot, existing);
    await editJson(
      join(out, 'package.json'),
      (v) => {
        v.scripts = { test: 'vitest run', lint: 'eslint .' };
        v.devDependencies = { vitest: '^4.1.12', typescript: '^5.0.0' };
        v.license = 'MIT';
      },
      4,
    );
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual(clean);
  });

  it('reports a hand edit of an owned key by its pointer', async () => {
    const contentRoot = await source();
    const { out } = await generate(config, contentRoot, existing);
    await editJson(join(out, 'package.json'), (v) => {
      v.version = '9.9.9';
      v.scripts = { test: 'vitest run' };
    });
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual({
      ok: false,
      changed: ['package.json'],
      missing: [],
      unexpected: [],
      edited: [],
      omitted: [],
      packageJson: ['package.json#/version'],
    });
  });

  it('reports a package.json that is no longer a JSON object as drift of the whole file', async () => {
    const contentRoot = await source();
    const { out } = await generate(config, contentRoot, existing);
    await writeFile(join(out, 'package.json'), '{ not json');
    expect(await verifyPlugin(out, config, { contentRoot })).toMatchObject({
      ok: false,
      changed: ['package.json'],
      packageJson: ['package.json'],
    });
  });

  it('writes the whole file when the folder has none yet', async () => {
    const pkg = await buildPlugin(config, { contentRoot: await source() });
    const own = await buildPlugin({ ...config, pi: {} }, { contentRoot: await source() });
    expect(text(pkg.files.get('package.json')?.bytes)).toBe(text(own.files.get('package.json')?.bytes));
  });
});

describe('opencode and pi together', () => {
  it("write one package.json with both runtimes' keys, owned in full", async () => {
    const contentRoot = await source();
    const config: PluginConfig = { ...base, runtimes: ['opencode', 'pi'], packageManager: 'pnpm@9.15.0' };
    const { pkg, out } = await generate(config, contentRoot);
    const packageJson = json(pkg.files.get('package.json')?.bytes);
    expect(Object.keys(packageJson)).toEqual([
      'name',
      'version',
      'description',
      'files',
      'pi',
      'dependencies',
      'packageManager',
    ]);
    expect(packageJson.dependencies).toEqual({ '@opencode/plugin': '^2.0.26' });
    expect(packageJson.pi).toEqual({ skills: ['./.pi/skills'] });
    expect(await verifyPlugin(out, config, { contentRoot })).toEqual(clean);
    await editJson(join(out, 'package.json'), (v) => (v.scripts = {}));
    expect(await verifyPlugin(out, config, { contentRoot })).toMatchObject({
      ok: false,
      changed: ['package.json'],
      edited: ['package.json'],
    });
  });

  it('refuse pi package_json = "merge", at load and at build', async () => {
    const raw = { name: 'a.b', runtimes: ['opencode', 'pi'], pi: { package_json: 'merge' } };
    expect(() => normalizePluginConfig(raw)).toThrow(PluginConfigError);
    expect(() => normalizePluginConfig(raw)).toThrow(
      /pi\.packageJson is "merge", but the opencode runtime owns the whole package\.json/,
    );
    await expect(
      buildPlugin(
        { ...base, runtimes: ['opencode', 'pi'], pi: { packageJson: 'merge' } },
        { contentRoot: await source() },
      ),
    ).rejects.toMatchObject({
      code: 'PLUGIN_CONFIG_INVALID',
      key: 'pi.packageJson',
    });
  });
});

describe('runtimes without opencode or pi', () => {
  it.each([[undefined], [[]], [['agent-plugins']], [['agent-plugins', 'claude', 'codex', 'copilot']]])(
    '%j adds no package.json',
    async (runtimes) => {
      const contentRoot = await source();
      const config: PluginConfig = { ...base, ...(runtimes === undefined ? {} : { runtimes }) };
      const { pkg, out } = await generate(config, contentRoot);
      expect([...pkg.files.keys()]).toEqual([
        'plugin.json',
        'skills/review/SKILL.md',
        'skills/review/scripts/run.sh',
        SIDECAR,
      ]);
      expect(await verifyPlugin(out, config, { contentRoot })).toEqual({
        ok: true,
        changed: [],
        missing: [],
        unexpected: [],
        edited: [],
        omitted: [],
      });
    },
  );

  it('reports a package.json left from an earlier configuration as unexpected', async () => {
    const contentRoot = await source();
    const { out } = await generate({ ...base, runtimes: ['opencode'] }, contentRoot);
    expect(await verifyPlugin(out, { ...base, runtimes: ['agent-plugins'] }, { contentRoot })).toMatchObject({
      ok: false,
      unexpected: ['package.json'],
    });
  });

  it('accepts any runtime name at load, and only a list of strings', () => {
    expect(normalizePluginConfig({ name: 'a.b', runtimes: ['agent-plugins', 'someone-elses'] }).runtimes).toEqual([
      'agent-plugins',
      'someone-elses',
    ]);
    for (const runtimes of ['opencode', [1], [['pi']]]) {
      expect(() => normalizePluginConfig({ name: 'a.b', runtimes })).toThrow(/runtimes must be a list of strings/);
    }
  });
});

describe('determinism', () => {
  it.each([
    ['opencode', ['opencode']],
    ['pi', ['pi']],
    ['both', ['pi', 'opencode']],
  ])("%s: the same configuration builds the same bytes, whatever the runtimes' order", async (_, runtimes) => {
    const contentRoot = await source();
    const config: PluginConfig = {
      ...base,
      keywords: ['review'],
      author: { name: 'Acme' },
      packageManager: 'pnpm@9.15.0',
      runtimes,
    };
    const one = await buildPlugin(config, { contentRoot });
    const two = await buildPlugin({ ...config, runtimes: [...runtimes].reverse() }, { contentRoot: await source() });
    expect([...two.files.keys()]).toEqual([...one.files.keys()]);
    for (const [path, file] of one.files) expect(text(two.files.get(path)?.bytes), path).toBe(text(file.bytes));
  });
});
