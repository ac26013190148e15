import { spawnSync } from 'node:child_process';
import { access, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { LAYER_TAR_GZIP, OCI_MANIFEST, OciClient } from '@agentproto/oci';
import { type OciRegistry, startOciRegistry, tarOf, type TarOfEntry } from '@agentproto/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  PluginGitPathError,
  buildPlugin,
  emitPlugin,
  importPlugin,
  loadPluginConfig,
  pullPlugin,
  pushPlugin,
  readPackageFiles,
  validatePlugin,
  writePlugin,
} from '../../src/index.js';
import { PLUGIN_ARTIFACT_TYPE, PLUGIN_CONFIG_TYPE } from '../../src/oci/artifact.js';
import { PLUGIN_100, json, skillMd } from '../support/validate-packages.js';

let registry: OciRegistry;
beforeAll(async () => {
  registry = await startOciRegistry();
});
afterAll(async () => {
  await registry?.close();
});

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plugins-git-'));
  made.push(dir);
  return dir;
}

/** The spellings a package may try: each is `.git` to git on Linux, Windows or macOS. */
const SPELLINGS = ['.git', '.GIT', '.Git', 'git~1', 'GIT~1', '.git.', '.git ', '.g\u200cit', '\ufeff.git'];

/**
 * A repository's metadata, as a hostile package would carry it under `at`: a config whose
 * core.fsmonitor runs `hook` on the next `git status`, and just enough for git to take the
 * folder for a repository.
 */
function repositoryFiles(at: string, marker: string): Record<string, string> {
  return {
    [`${at}/HEAD`]: 'ref: refs/heads/main\n',
    [`${at}/config`]: `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}; false"\n`,
    [`${at}/objects/info/packs`]: '',
    [`${at}/refs/heads/.keep`]: '',
  };
}

const PLUGIN_JSON = json({
  $schema: PLUGIN_100,
  name: 'acme.tools',
  version: '1.2.0',
  description: 'Acme review tooling.',
});

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** Every path below `dir`, folders with a trailing slash. */
async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const name of await readdir(join(dir, rel))) {
      const path = rel === '' ? name : `${rel}/${name}`;
      if ((await lstat(join(dir, path))).isDirectory()) {
        out.push(`${path}/`);
        await walk(path);
      } else out.push(path);
    }
  };
  await walk('');
  return out.sort();
}

/** The spellings above, recognised without the code under test. */
const anyGitSegment = (path: string) =>
  path.split('/').some((segment) => /^(?:\.git|git~1)[. ]*$/i.test(segment.replace(/[\u200c\ufeff]/g, '')));

/** Runs `git status` in `dir` (as a user would after importing or pulling) and says whether the planted hook ran. */
async function gitStatusRunsHook(dir: string, marker: string): Promise<boolean> {
  spawnSync('git', ['-C', dir, 'status'], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dir) },
  });
  return access(marker).then(
    () => true,
    () => false,
  );
}

/** A package folder on disk: a valid plugin, plus a repository's metadata under every spelling. */
async function hostilePackage(marker: string): Promise<string> {
  const dir = join(await scratch(), 'package');
  await writeTree(dir, {
    'plugin.json': PLUGIN_JSON,
    'skills/review/SKILL.md': skillMd('review'),
    'notes.md': 'shipped\n',
    ...repositoryFiles('.git', marker),
    ...Object.fromEntries(SPELLINGS.slice(1).map((spelling) => [`${spelling}/config`, '[core]\n'])),
    'skills/review/.git': 'gitdir: /somewhere/else\n',
    'bin/.Git/hooks/post-checkout': '#!/bin/sh\n',
  });
  return dir;
}

describe('a plugin never reads, imports or ships a .git entry', () => {
  it('validatePlugin denies every .git spelling with a warning, and loads the rest', async () => {
    const dir = await hostilePackage(join(await scratch(), 'marker'));
    const validation = await validatePlugin(dir);
    expect(validation.rejected).toBe(false);
    expect(validation.findings.filter((f) => f.severity === 'error')).toEqual([]);
    const denied = validation.findings.filter((f) => f.code === 'read.git-metadata');
    expect(denied.map((f) => f.severity)).toEqual(denied.map(() => 'warning'));
    expect(denied.map((f) => f.path).sort()).toEqual([...SPELLINGS, 'bin/.Git', 'skills/review/.git'].sort());
    expect(validation.skills).toEqual(['review']);
  });

  it('importPlugin, and agentproto plugin import through writePlugin, give no .git file, no .git include glob, and git status runs nothing', async () => {
    const marker = join(await scratch(), 'marker');
    const dir = await hostilePackage(marker);
    const imported = await importPlugin(dir);
    expect([...imported.content.keys()].filter(anyGitSegment)).toEqual([]);
    expect(imported.content.has('notes.md')).toBe(true);
    expect(imported.config?.include ?? []).toEqual(['notes.md']);
    const out = join(await scratch(), 'imported');
    await writePlugin(imported.content, out);
    expect((await listTree(out)).filter(anyGitSegment)).toEqual([]);
    expect(await gitStatusRunsHook(out, marker)).toBe(false);
    // The same package, as it stands, does run the hook: the test would see a planted .git.
    expect(await gitStatusRunsHook(dir, marker)).toBe(true);
  });

  it('pushPlugin ships no .git entry even when the package folder is itself a repository', async () => {
    const marker = join(await scratch(), 'marker');
    const dir = await hostilePackage(marker);
    const pushed = await pushPlugin(dir, `${registry.host}/plugins/git-push:v1`, { allowInsecureHttp: true });
    expect(pushed.files.filter(anyGitSegment)).toEqual([]);
    expect(pushed.files).toContain('notes.md');
    const out = join(await scratch(), 'pulled');
    await pullPlugin(pushed.pinned, out, { allowInsecureHttp: true });
    expect((await listTree(out)).filter(anyGitSegment)).toEqual([]);
    expect(await gitStatusRunsHook(out, marker)).toBe(false);
  });

  it('buildPlugin and emitPlugin ship no .git entry, whatever the include globs and pi.skills_dir say', async () => {
    const project = join(await scratch(), 'project');
    await writeTree(project, {
      'plugin.toml': `[plugin]\nname = "acme.tools"\nversion = "1.0.0"\ndescription = "d"\ninclude = [".git/*", ".GIT/**", "git~1/", "**"]\nruntimes = ["pi"]\n[plugin.pi]\nskills_dir = ".GIT/skills"\n`,
      'skills/review/SKILL.md': skillMd('review'),
      'skills/review/.git': 'gitdir: /x\n',
      'notes.md': 'n\n',
      ...repositoryFiles('.git', '/nonexistent'),
      ...Object.fromEntries(SPELLINGS.slice(1).map((spelling) => [`${spelling}/config`, '[core]\n'])),
    });
    const { config, contentRoot } = await loadPluginConfig(join(project, 'plugin.toml'));
    const built = await buildPlugin(config, { contentRoot });
    expect([...built.files.keys()].filter(anyGitSegment)).toEqual([]);
    expect(built.files.has('notes.md')).toBe(true);
    expect(built.findings.map((f) => f.code)).toContain('runtime.pi-skills-dir-invalid');
    const out = join(await scratch(), 'emitted');
    const emitted = await emitPlugin(config, out, { contentRoot });
    expect(emitted.files.filter(anyGitSegment)).toEqual([]);
    expect((await listTree(out)).filter(anyGitSegment)).toEqual([]);
  });

  it.each(['.git/config', '.GIT/config', 'git~1/config', 'skills/review/.g\u200cit'])(
    'writePlugin refuses %j before it writes anything',
    async (path) => {
      const out = join(await scratch(), 'out');
      const files = new Map([
        ['plugin.json', { bytes: Buffer.from(PLUGIN_JSON), mode: 0o644 as const }],
        [path, { bytes: Buffer.from('[core]\n'), mode: 0o644 as const }],
      ]);
      const error = await writePlugin(files, out).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PluginGitPathError);
      expect(error).toMatchObject({ code: 'PLUGIN_GIT_PATH', path });
      expect(await readdir(dirname(out))).toEqual([]);
    },
  );

  it('readPackageFiles (verify) reads no .git entry', async () => {
    const dir = await hostilePackage(join(await scratch(), 'marker'));
    const files = await readPackageFiles(dir);
    expect([...files.keys()].filter(anyGitSegment)).toEqual([]);
    expect(files.has('notes.md')).toBe(true);
  });
});

async function layerOf(entries: readonly TarOfEntry[]): Promise<Buffer> {
  return gzipSync(await tarOf(entries));
}

let tags = 0;
/** An artifact pushed by hand, as a hostile publisher would: a valid plugin plus `extra` entries. */
async function pushHostile(extra: readonly TarOfEntry[]): Promise<string> {
  const repository = `plugins/git-pull-${++tags}`;
  const client = new OciClient({ url: registry.url, repository, allowInsecureHttp: true });
  const entries: TarOfEntry[] = [
    { name: 'plugin.json', data: PLUGIN_JSON },
    { name: 'skills/review/SKILL.md', data: skillMd('review') },
    ...extra,
  ];
  const layer = await client.pushBlob(await layerOf(entries));
  const files = entries.filter((entry) => (entry.type ?? 'file') === 'file').length;
  const config = await client.pushBlob(
    Buffer.from(JSON.stringify({ format: 1, name: 'acme.tools', version: '1.2.0', spec: '1.0.0', files })),
  );
  await client.putManifest('v1', {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType: PLUGIN_ARTIFACT_TYPE,
    config: { mediaType: PLUGIN_CONFIG_TYPE, digest: config.digest, size: config.size },
    layers: [{ mediaType: LAYER_TAR_GZIP, digest: layer.digest, size: layer.size }],
  });
  return `${registry.host}/${repository}:v1`;
}

describe('pullPlugin never writes a .git entry from a registry', () => {
  it.each(SPELLINGS)(
    'refuses a layer holding a repository under %j: nothing is written and git status runs nothing',
    async (spelling) => {
      const marker = join(await scratch(), 'marker');
      const ref = await pushHostile(
        Object.entries(repositoryFiles(spelling, marker)).map(([name, data]) => ({ name, data })),
      );
      const dir = join(await scratch(), 'pulled');
      const error = await pullPlugin(ref, dir, { allowInsecureHttp: true }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'PLUGIN_OCI_UNSAFE_LAYER', reason: 'git-metadata' });
      await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await readdir(dirname(dir))).toEqual([]);
      await mkdir(dir);
      expect(await gitStatusRunsHook(dir, marker)).toBe(false);
    },
  );

  it('refuses a gitfile deep in a skill and a .git folder entry', async () => {
    for (const extra of [
      [{ name: 'skills/review/.git', data: 'gitdir: /home/someone/.git\n' }],
      [{ name: 'bin/.GIT/', type: 'directory' as const }],
    ]) {
      const dir = join(await scratch(), 'pulled');
      const error = await pullPlugin(await pushHostile(extra), dir, { allowInsecureHttp: true }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'PLUGIN_OCI_UNSAFE_LAYER', reason: 'git-metadata' });
      await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    }
  });

  it('still pulls a package holding .gitignore, .gitmodules and .github files', async () => {
    const ref = await pushHostile([
      { name: '.gitignore', data: 'x\n' },
      { name: '.gitmodules', data: '' },
      { name: '.github/workflows/ci.yml', data: 'on: push\n' },
    ]);
    const dir = join(await scratch(), 'pulled');
    await pullPlugin(ref, dir, { allowInsecureHttp: true });
    expect(await listTree(dir)).toEqual([
      '.github/',
      '.github/workflows/',
      '.github/workflows/ci.yml',
      '.gitignore',
      '.gitmodules',
      'plugin.json',
      'skills/',
      'skills/review/',
      'skills/review/SKILL.md',
    ]);
  });
});
