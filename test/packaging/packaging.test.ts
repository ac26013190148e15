// The proof that a user can install the SDK, not just build it here: pack every public package
// as `pnpm publish` would, install the tarballs into a fresh project outside the workspace with
// npm, and use them there as a consumer does: `import`, `require`, `tsc` and the `agentproto` bin.
// Each tarball also ships only what it names (no `@agentproto/source` condition, which points at
// src/), the project's LICENSE, and the same repository, homepage and issue tracker. The consumer
// checks run under the Node that runs the tests and again under Node 22, 24 and the newest release
// (the npm `node` package's binaries, fetched once into npm's cache as npx does), on the one install.
import { execFile, execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFiles, needsBuild } from '../../scripts/workspace-builds.mjs';
import { dependencyFolder } from '../../tsup.shared.ts';

const execFileAsync = promisify(execFile);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONSUMER = fileURLToPath(new URL('./consumer/', import.meta.url));
/** tsc's own script, run by whichever Node binary a check is under. */
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const PNPM = ['-y', 'pnpm@12.4.2'];
/** The condition that sends the workspace to src/. `publishConfig.exports` leaves it out of the tarball. */
const SOURCE_CONDITION = '@agentproto/source';
/** Where every public package says its source lives, and where to report a bug. */
const REPOSITORY_URL = 'git+https://github.com/agentproto/agentproto-sdk.git';
const HOMEPAGE_BASE = 'https://github.com/agentproto/agentproto-sdk/tree/main/';
const ISSUES_URL = 'https://github.com/agentproto/agentproto-sdk/issues';

// Every child is bounded and the setup hook gets the sum: an unreachable registry fails the run
// within minutes instead of holding CI until its own timeout.
const BUILD_TIMEOUT = 240_000;
const PACK_TIMEOUT = 60_000;
const INSTALL_TIMEOUT = 180_000;
const TSC_TIMEOUT = 120_000;
const RUN_TIMEOUT = 30_000;
/** Fetching one release of the npm `node` package (about 30 MB) the first time; later runs find it in npm's cache. */
const NODE_FETCH_TIMEOUT = 240_000;

/**
 * The Node releases the consumer checks also run under, as npm's `node` package names them: the
 * supported lines people run and the newest. `engines` still promises `>=20`, the Node that runs
 * the tests here.
 */
const NODE_RELEASES = ['22', '24', 'latest'] as const;

/**
 * Every public package, the function a consumer calls first, and what it returns: the same call
 * through `import` and through `require`. A new public package fails the run until it has a line.
 */
const CALLS: { name: string; fn: string; args: unknown[]; result: unknown }[] = [
  {
    name: '@agentproto/content-cache',
    fn: 'defaultCacheRoot',
    args: [{ XDG_CACHE_HOME: '/srv/cache' }, '/home/user'],
    result: '/srv/cache/agentproto',
  },
  { name: '@agentproto/git', fn: 'isFullCommitId', args: ['a'.repeat(40)], result: true },
  {
    name: '@agentproto/archive',
    fn: 'safeEntrySegments',
    args: ['./skills//review/SKILL.md'],
    result: ['skills', 'review', 'SKILL.md'],
  },
  {
    name: '@agentproto/oci',
    fn: 'parseReference',
    args: ['ghcr.io/acme/plugin:1.0.0'],
    result: { registry: 'ghcr.io', repository: 'acme/plugin', tag: '1.0.0' },
  },
  {
    name: '@agentproto/documents',
    fn: 'parseUntrustedJson',
    args: ['{"name":"review"}', { source: 'plugin.json' }],
    result: { name: 'review' },
  },
  { name: '@agentproto/fs-inside', fn: 'realRootOf', args: ['/'], result: '/' },
  // The account sandboxes run as: this one, or nobody when the tests run as root.
  {
    name: '@agentproto/sandbox',
    fn: 'defaultRunAs',
    args: [],
    result: { uid: expect.any(Number), gid: expect.any(Number) },
  },
  {
    name: '@agentproto/aip-17',
    fn: 'validateRunner',
    args: [{ limits: { memory_mb: 0 } }],
    result: { ok: false, problems: [{ pointer: '/limits/memory_mb', message: 'must be at least 1' }], warnings: [] },
  },
  {
    name: '@agentproto/aip-26',
    fn: 'splitWords',
    args: ['node tool.js --verbose'],
    result: { ok: true, words: ['node', 'tool.js', '--verbose'] },
  },
  {
    name: '@agentproto/skill-providers',
    fn: 'parseGitString',
    args: ['https://github.com/acme/skills.git@v1.4.0#skills/review'],
    result: {
      provider: 'git',
      source: 'https://github.com/acme/skills.git',
      version: 'v1.4.0',
      path: 'skills/review',
      name: 'review',
      config: {},
    },
  },
  {
    name: '@agentproto/agent-plugins',
    fn: 'pluginNameProblem',
    args: ['My Plugin'],
    result: expect.stringContaining('lower-case'),
  },
  // Prints the version on the probe's stdout; the report goes to a file.
  { name: '@agentproto/cli', fn: 'main', args: [['--version']], result: 0 },
];

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const;

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  main?: string;
  module?: string;
  types?: string;
  bin?: string | Record<string, string>;
  exports?: unknown;
  publishConfig?: Record<string, unknown>;
  repository?: { type?: string; url?: string; directory?: string };
  homepage?: string;
  bugs?: { url?: string };
  keywords?: string[];
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

interface WorkspacePackage {
  dir: string;
  manifest: Manifest;
}

interface Packed {
  name: string;
  /** The package's folder in the workspace, relative to the root: `packages/git`. */
  directory: string;
  /** The manifest in the tarball, after pnpm rewrote `workspace:` ranges. */
  manifest: Manifest;
  /** Paths inside the tarball, without the `package/` folder npm expects them in. */
  entries: string[];
  /** The tarball's LICENSE, if it has one. */
  license: string | undefined;
}

/** What a probe saw of one package: the file Node resolved, the kind of each export, the call's result. */
interface Probe {
  resolved: string;
  exports: Record<string, string>;
  result?: unknown;
}

/** Settings kept from npm_config_*: where the registry is and how to reach it, so a CI mirror still applies. */
const KEPT_NPM_CONFIG = /^npm_config_(registry|cache|userconfig|cafile|proxy|https_proxy|noproxy|strict_ssl)$/i;

/**
 * The environment of every child: ours without the npm_* and pnpm_* variables that `pnpm test`
 * and npx export to their scripts. npm reads each npm_config_* as configuration (an inherited
 * npm_config_global would install globally), and the consumer must install as a user would.
 */
function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^p?npm_/i.test(key) || KEPT_NPM_CONFIG.test(key)),
  );
}

/** Runs a program to completion. A failure names the command and carries stdout too: tsc reports there. */
async function run(
  file: string,
  args: string[],
  options: { cwd: string; timeout: number; env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(file, args, {
      ...options,
      env: { ...childEnv(), ...options.env },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const failure = error as { code?: number | string; signal?: string | null; stdout?: string; stderr?: string };
    const how = failure.signal ? `killed by ${failure.signal}` : `exit ${String(failure.code)}`;
    throw new Error(
      `${[file, ...args].join(' ')} (in ${options.cwd}) failed: ${how}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`,
      { cause: error },
    );
  }
}

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

async function mtime(path: string): Promise<number | undefined> {
  return stat(path).then(
    (stats) => stats.mtimeMs,
    () => undefined,
  );
}

async function workspacePackages(): Promise<WorkspacePackage[]> {
  const packagesDir = join(ROOT, 'packages');
  const names = (await readdir(packagesDir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const packages = await Promise.all(
    names.map(async (name) => {
      const dir = join(packagesDir, name);
      const manifest = await readJson<Manifest>(join(dir, 'package.json')).catch(() => undefined);
      return manifest && { dir, manifest };
    }),
  );
  return packages.filter((pkg): pkg is WorkspacePackage => pkg !== undefined);
}

/** Every file an exports map names, with the conditions that lead to it. */
function exportTargets(value: unknown, conditions: string[] = []): { conditions: string[]; target: string }[] {
  if (typeof value === 'string') return [{ conditions, target: value }];
  if (Array.isArray(value)) return value.flatMap((item) => exportTargets(item, conditions));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => exportTargets(item, [...conditions, key]));
  return [];
}

/** An exports map with every `@agentproto/source` condition removed: what a tarball should publish. */
function withoutSource(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== SOURCE_CONDITION)
      .map(([key, item]) => [key, withoutSource(item)]),
  );
}

/**
 * The files a manifest names: every exports target under any condition, main, module, types, bins.
 * In the workspace that includes src/index.ts of the source condition; in a tarball it must not.
 */
function loadableFiles(manifest: Manifest): string[] {
  const exported = exportTargets(manifest.exports);
  const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
  const files = [...exported.map(({ target }) => target), manifest.main, manifest.module, manifest.types, ...bins];
  return [
    ...new Set(files.filter((file): file is string => file !== undefined).map((file) => file.replace(/^\.\//, ''))),
  ].sort();
}

/**
 * Leaves dist/ as `pnpm build` writes it (needsBuild: a file the package loads from dist/ is
 * missing, or older than its source, manifest or build config). CI builds before testing, so this does nothing there;
 * a local run after a checkout or an edit builds first rather than pack stale output or skip.
 */
async function ensureBuilt(packages: WorkspacePackage[]): Promise<void> {
  const stale: string[] = [];
  for (const pkg of packages) if (await needsBuild(pkg)) stale.push(pkg.manifest.name);
  if (stale.length === 0) return;
  process.stderr.write(`packaging: dist/ is missing or older than src/ in ${stale.join(', ')}; running pnpm build\n`);
  await run('npx', [...PNPM, 'build'], { cwd: ROOT, timeout: BUILD_TIMEOUT });
  for (const { dir, manifest } of packages) {
    const missing: string[] = [];
    for (const file of builtFiles(manifest)) if ((await mtime(join(dir, file))) === undefined) missing.push(file);
    if (missing.length > 0) throw new Error(`pnpm build did not write ${missing.join(', ')} in ${dir}`);
  }
}

/** `npm pack`'s file name: `@agentproto/cli@0.1.0` → `agentproto-cli-0.1.0.tgz`. */
function tarballName({ name, version }: Manifest): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

async function inspectTarball(tarball: string, cwd: string): Promise<Omit<Packed, 'name' | 'directory'>> {
  const { stdout: listing } = await run('tar', ['-tzf', tarball], { cwd, timeout: RUN_TIMEOUT });
  const paths = listing.split('\n').filter((line) => line !== '');
  const outside = paths.filter((path) => !path.startsWith('package/'));
  if (outside.length > 0) throw new Error(`${tarball} holds entries outside package/: ${outside.join(', ')}`);
  const { stdout: manifest } = await run('tar', ['-xzOf', tarball, 'package/package.json'], {
    cwd,
    timeout: RUN_TIMEOUT,
  });
  const license = paths.includes('package/LICENSE')
    ? (await run('tar', ['-xzOf', tarball, 'package/LICENSE'], { cwd, timeout: RUN_TIMEOUT })).stdout
    : undefined;
  return {
    manifest: JSON.parse(manifest) as Manifest,
    entries: paths.map((path) => path.slice('package/'.length)).sort(),
    license,
  };
}

/** `>=20.3.0` → [20, 3, 0]. Only a floor is accepted: that is all `engines` should promise. */
function nodeFloor(range: string | undefined): number[] {
  const match = /^>=(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range ?? '');
  if (!match) throw new Error(`engines.node must read ">=MAJOR[.MINOR[.PATCH]]", not ${JSON.stringify(range)}`);
  return match.slice(1).map((part) => Number(part ?? 0));
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** The flag that turns require(esm) off: on by default since Node 20.19 and 22.12; off, it proves the CJS build needs no ES module. */
const NO_REQUIRE_ESM = '--no-experimental-require-module';

/** A Node binary the consumer checks run under. */
interface NodeBinary {
  path: string;
  /** `v24.3.0`: named in each check's failure. */
  version: string;
  /** Whether this Node still accepts NO_REQUIRE_ESM. */
  canTurnOffRequireEsm: boolean;
}

/** What a Node binary says of itself, printed as JSON by `-p`. */
const DESCRIBE_NODE = `JSON.stringify({ path: process.execPath, version: process.version, canTurnOffRequireEsm: process.allowedNodeEnvironmentFlags.has(${JSON.stringify(NO_REQUIRE_ESM)}) })`;

const testNode: NodeBinary = {
  path: process.execPath,
  version: process.version,
  canTurnOffRequireEsm: process.allowedNodeEnvironmentFlags.has(NO_REQUIRE_ESM),
};

let scratch = '';
let project = '';
let publicPackages: WorkspacePackage[] = [];
let privateNames: string[] = [];
let packed: Packed[] = [];
/** What `pnpm pack` left in the tarball folder. */
let tarballFiles: string[] = [];
const probes = new Map<string, Promise<Record<string, Probe>>>();

/**
 * Runs a probe of consumer/ in the project under one Node binary once, however many tests read
 * its report. The CommonJS probe runs with require(esm) turned off.
 */
function probe(node: NodeBinary, script: 'probe.mjs' | 'probe.cjs'): Promise<Record<string, Probe>> {
  const key = `${node.version} ${script}`;
  let report = probes.get(key);
  if (report === undefined) {
    const reportPath = join(project, `${script}.${node.version}.report.json`);
    const nodeArgs = script === 'probe.cjs' ? [NO_REQUIRE_ESM] : [];
    report = run(node.path, [...nodeArgs, script, 'calls.json', reportPath], {
      cwd: project,
      timeout: RUN_TIMEOUT,
    }).then(() => readJson<Record<string, Probe>>(reportPath));
    probes.set(key, report);
  }
  return report;
}

const nodeFetches = new Map<string, Promise<NodeBinary>>();

/**
 * The binary of one release of npm's `node` package, asked once: npx keeps the package in npm's
 * cache, so only the first run on a machine downloads it. Runs outside the workspace.
 */
function fetchNode(release: string): Promise<NodeBinary> {
  let fetched = nodeFetches.get(release);
  if (fetched === undefined) {
    fetched = run('npx', ['-y', '-p', `node@${release}`, 'node', '-p', DESCRIBE_NODE], {
      cwd: scratch,
      timeout: NODE_FETCH_TIMEOUT,
    }).then(({ stdout }) => {
      const node = JSON.parse(stdout) as NodeBinary;
      if (release !== 'latest' && !node.version.startsWith(`v${release}.`))
        throw new Error(`npx -p node@${release} gave Node ${node.version}`);
      return node;
    });
    nodeFetches.set(release, fetched);
  }
  return fetched;
}

/** PATH with the folder of a Node binary first: what `#!/usr/bin/env node` in a bin then finds. */
function pathWith(node: NodeBinary): NodeJS.ProcessEnv {
  return { PATH: [dirname(node.path), process.env.PATH ?? ''].join(delimiter) };
}

/** node_modules/.bin/agentproto, as a shell runs it: its shebang finds `node` on PATH. */
function agentproto(args: string[], node: NodeBinary = testNode) {
  return run(join(project, 'node_modules', '.bin', 'agentproto'), args, {
    cwd: project,
    timeout: RUN_TIMEOUT,
    env: pathWith(node),
  });
}

beforeAll(
  async () => {
    const all = await workspacePackages();
    publicPackages = all.filter(({ manifest }) => manifest.private !== true);
    privateNames = all.filter(({ manifest }) => manifest.private === true).map(({ manifest }) => manifest.name);
    await ensureBuilt(publicPackages);

    scratch = await realpath(await mkdtemp(join(tmpdir(), 'agentproto-packaging-')));
    // Asked now, awaited by each release's checks: the first download overlaps packing and installing.
    for (const release of NODE_RELEASES) fetchNode(release).catch(() => undefined);
    const tarballs = join(scratch, 'tarballs');
    project = join(scratch, 'project');
    await mkdir(project);

    const filters = publicPackages.flatMap(({ manifest }) => ['--filter', manifest.name]);
    await run('npx', [...PNPM, '-r', ...filters, 'pack', '--pack-destination', tarballs], {
      cwd: ROOT,
      timeout: PACK_TIMEOUT,
    });
    tarballFiles = (await readdir(tarballs)).sort();
    const tarballPaths = publicPackages.map(({ manifest }) => join(tarballs, tarballName(manifest)));
    packed = await Promise.all(
      publicPackages.map(async ({ dir, manifest }, index) => ({
        name: manifest.name,
        directory: relative(ROOT, dir).split(sep).join('/'),
        ...(await inspectTarball(tarballPaths[index]!, scratch)),
      })),
    );

    // A user's project: its own package.json, node's types at the workspace's version, and every
    // tarball in one install, so `@agentproto/x@0.1.0` ranges resolve to them and not to the registry.
    const typesNode = (await readJson<Manifest>(join(ROOT, 'package.json'))).devDependencies?.['@types/node'];
    if (typesNode === undefined)
      throw new Error(
        `${join(ROOT, 'package.json')} has no devDependency on @types/node, whose version the consumer installs`,
      );
    await writeFile(
      join(project, 'package.json'),
      `${JSON.stringify({ name: 'agentproto-consumer', version: '0.0.0', private: true }, null, 2)}\n`,
    );
    for (const file of await readdir(CONSUMER)) await copyFile(join(CONSUMER, file), join(project, file));
    await writeFile(
      join(project, 'calls.json'),
      JSON.stringify(CALLS.map(({ name, fn, args }) => ({ name, fn, args }))),
    );
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
        '--loglevel=error',
        ...tarballPaths,
        `@types/node@${typesNode}`,
      ],
      {
        cwd: project,
        timeout: INSTALL_TIMEOUT,
      },
    );
  },
  BUILD_TIMEOUT + PACK_TIMEOUT + INSTALL_TIMEOUT + 60_000,
);

afterAll(async () => {
  if (scratch !== '') await rm(scratch, { recursive: true, force: true });
});

describe('the packed packages', () => {
  it('are every public package, each with a call above, and never a private one', () => {
    expect(publicPackages.map(({ manifest }) => manifest.name).sort()).toEqual(CALLS.map(({ name }) => name).sort());
    expect(privateNames).toContain('@agentproto/testkit');
    expect(tarballFiles).toEqual(publicPackages.map(({ manifest }) => tarballName(manifest)).sort());
  });

  it('hold package.json, README.md, LICENSE and dist/ only: no src, test, node_modules or build config', () => {
    const top = ['package.json', 'README.md', 'LICENSE'];
    const stray = packed.flatMap(({ name, entries }) =>
      entries.filter((entry) => !top.includes(entry) && !entry.startsWith('dist/')).map((entry) => `${name}: ${entry}`),
    );
    const missing = packed.flatMap(({ name, entries }) =>
      top.filter((entry) => !entries.includes(entry)).map((entry) => `${name}: ${entry}`),
    );
    expect({ stray, missing }).toEqual({ stray: [], missing: [] });
  });

  // pnpm packs the workspace root's LICENSE into a package that has none of its own.
  it("ship the project's LICENSE, byte for byte", async () => {
    const license = await readFile(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\n/);
    const different = packed
      .filter((pkg) => pkg.license !== license)
      .map(({ name, license: shipped }) => `${name}: ${shipped === undefined ? 'no LICENSE' : 'a different LICENSE'}`);
    expect(different).toEqual([]);
  });

  it('ship the licence of every dependency their dist/ inlines, in dist/THIRD-PARTY-LICENSES.md', async () => {
    const inlined: Record<string, string[]> = {
      '@agentproto/agent-plugins': ['modern-tar'],
      '@agentproto/documents': ['yaml', 'smol-toml'],
      '@agentproto/skill-providers': ['p-limit', 'yocto-queue'],
    };
    const shipping = packed
      .filter(({ entries }) => entries.includes('dist/THIRD-PARTY-LICENSES.md'))
      .map(({ name }) => name)
      .sort();
    expect(shipping).toEqual(Object.keys(inlined).sort());
    for (const [name, dependencies] of Object.entries(inlined)) {
      const shipped = await readFile(
        join(project, 'node_modules', ...name.split('/'), 'dist', 'THIRD-PARTY-LICENSES.md'),
        'utf8',
      );
      const folder = join(ROOT, packed.find((pkg) => pkg.name === name)!.directory);
      for (const dependency of dependencies) {
        // The licence file of the version this package resolves, word for word.
        const root = dependencyFolder(dependency, folder);
        const licence = (await readdir(root)).find((entry) => /^licen[cs]e(\.(md|txt))?$/i.test(entry))!;
        const version = (await readJson<{ version: string }>(join(root, 'package.json'))).version;
        expect({ name, dependency, heading: shipped.includes(`## ${dependency} ${version} (`) }).toEqual({
          name,
          dependency,
          heading: true,
        });
        expect(shipped).toContain((await readFile(join(root, licence), 'utf8')).trim());
      }
    }
  });

  it('inline each dependency in one package at most: a process loads one copy of it', async () => {
    // agent-plugins reads YAML nodes with documents' LineCounter, isMap and isSeq, not a yaml of its own.
    const inliners = new Map<string, string[]>();
    for (const { name, entries } of packed) {
      if (!entries.includes('dist/THIRD-PARTY-LICENSES.md')) continue;
      const shipped = await readFile(
        join(project, 'node_modules', ...name.split('/'), 'dist', 'THIRD-PARTY-LICENSES.md'),
        'utf8',
      );
      for (const [, dependency] of shipped.matchAll(/^## (\S+) /gm))
        inliners.set(dependency!, [...(inliners.get(dependency!) ?? []), name]);
    }
    expect(inliners.size).toBeGreaterThan(0);
    expect([...inliners].filter(([, names]) => names.length > 1)).toEqual([]);
  });

  it('name the same repository, homepage and issue tracker, each at its own folder, with keywords', () => {
    const wrong = packed.flatMap(({ name, directory, manifest }) => {
      const found = {
        repository: manifest.repository,
        homepage: manifest.homepage,
        bugs: manifest.bugs,
        keywords: Array.isArray(manifest.keywords) && manifest.keywords.length > 0,
      };
      const wanted = {
        repository: { type: 'git', url: REPOSITORY_URL, directory },
        homepage: `${HOMEPAGE_BASE}${directory}`,
        bugs: { url: ISSUES_URL },
        keywords: true,
      };
      return JSON.stringify(found) === JSON.stringify(wanted)
        ? []
        : [`${name}: ${JSON.stringify(found)}, not ${JSON.stringify(wanted)}`];
    });
    expect(wrong).toEqual([]);
  });

  it('hold every file their exports, main, module, types and bin name: ESM, CJS and both declarations', () => {
    const missing = packed.flatMap(({ name, manifest, entries }) => {
      const files = [
        ...new Set([
          ...loadableFiles(manifest),
          'dist/index.js',
          'dist/index.cjs',
          'dist/index.d.ts',
          'dist/index.d.cts',
        ]),
      ];
      return files.filter((file) => !entries.includes(file)).map((file) => `${name}: ${file}`);
    });
    expect(missing).toEqual([]);
  });

  it('never name the source condition, whose src/ they do not ship: it stays in the workspace', () => {
    const leaked = packed.flatMap(({ name, manifest }) =>
      exportTargets(manifest.exports)
        .filter(({ conditions }) => conditions.includes(SOURCE_CONDITION))
        .map(({ target }) => `${name}: ${SOURCE_CONDITION} → ${target}`),
    );
    // pnpm applied publishConfig: nothing of it is left to apply (or to drift) in the tarball.
    const unapplied = packed.filter(({ manifest }) => manifest.publishConfig?.exports !== undefined);
    expect({ leaked, unapplied: unapplied.map(({ name }) => name) }).toEqual({ leaked: [], unapplied: [] });
  });

  it('publish the same exports the workspace uses, the source condition left out', () => {
    const workspace = new Map(publicPackages.map(({ manifest }) => [manifest.name, manifest.exports]));
    for (const { name, manifest } of packed)
      expect({ name, exports: manifest.exports }).toEqual({ name, exports: withoutSource(workspace.get(name)) });
  });

  it('name the agentproto bin, a dist/ file that starts with a node shebang', async () => {
    const cli = packed.find(({ name }) => name === '@agentproto/cli');
    expect(cli?.manifest.bin).toEqual({ agentproto: './dist/bin.cjs' });
    const bin = await readFile(join(project, 'node_modules', '@agentproto', 'cli', 'dist', 'bin.cjs'), 'utf8');
    expect(bin.split('\n', 1)[0]).toBe('#!/usr/bin/env node');
  });

  it('depend on exact versions of each other, never on a workspace: range or a private package', () => {
    const versions = new Map(publicPackages.map(({ manifest }) => [manifest.name, manifest.version]));
    const problems = packed.flatMap(({ name, manifest }) =>
      DEPENDENCY_FIELDS.flatMap((field) =>
        Object.entries(manifest[field] ?? {}).flatMap(([dependency, range]) => {
          const where = `${name} ${field} ${dependency}@${range}`;
          if (range.startsWith('workspace:')) return [`${where}: a workspace range`];
          // devDependencies are never installed for a consumer; testkit may stay there.
          if (field !== 'devDependencies' && privateNames.includes(dependency)) return [`${where}: a private package`];
          if (field === 'dependencies' && versions.has(dependency) && range !== versions.get(dependency))
            return [`${where}: not ${versions.get(dependency)}`];
          return [];
        }),
      ),
    );
    expect(problems).toEqual([]);
  });

  it('ask for no older Node than the @agentproto packages they depend on', () => {
    const floors = new Map(packed.map(({ name, manifest }) => [name, nodeFloor(manifest.engines?.node)]));
    const lower = packed.flatMap(({ name, manifest }) =>
      Object.keys(manifest.dependencies ?? {})
        .filter(
          (dependency) => floors.has(dependency) && compareVersions(floors.get(name)!, floors.get(dependency)!) < 0,
        )
        .map(
          (dependency) =>
            `${name} ${manifest.engines?.node} < ${dependency} ${packed.find((p) => p.name === dependency)?.manifest.engines?.node}`,
        ),
    );
    expect(lower).toEqual([]);
  });
});

describe('a project outside the workspace that installs the tarballs', () => {
  it('lives under the system temp folder, not in the workspace', async () => {
    expect(relative(ROOT, project)).toMatch(/^\.\.[/\\]/);
    expect(relative(await realpath(tmpdir()), project)).not.toMatch(/^\.\./);
  });

  it('gets every @agentproto package from its tarball, and never @agentproto/testkit', async () => {
    const lock = await readJson<{ packages: Record<string, { resolved?: string }> }>(
      join(project, 'package-lock.json'),
    );
    const ours = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/@agentproto\//.test(path));
    expect(ours.map(([path]) => path).sort()).toEqual(
      publicPackages.map(({ manifest }) => `node_modules/${manifest.name}`).sort(),
    );
    for (const [path, { resolved }] of ours)
      expect({ path, resolved }).toEqual({ path, resolved: expect.stringMatching(/^file:.*\.tgz$/) });
    expect(Object.keys(lock.packages).filter((path) => path.endsWith('/@agentproto/testkit'))).toEqual([]);
    expect((await readdir(join(project, 'node_modules', '@agentproto'))).sort()).not.toContain('testkit');
  });

  it('runs npx agentproto from node_modules/.bin, never from the registry: --version and code run', async () => {
    // Offline and --no: npx may use the local bin and nothing else; a download would fail the run.
    // `--` keeps --version for agentproto: without it npx prints npm's own.
    const npx = (args: string[]) =>
      run('npx', ['--no', '--', 'agentproto', ...args], {
        cwd: project,
        timeout: RUN_TIMEOUT,
        env: { npm_config_offline: 'true' },
      });
    expect(await npx(['--version'])).toEqual({ stdout: `${cliVersion()}\n`, stderr: '' });
    await writeFile(
      join(project, 'hello.yaml'),
      'kind: tool\nname: hello\ncode:\n  sources:\n    - inline: { path: main.mjs, content: "console.log(`hello from ${process.version}`)" }\nrun: main.mjs\n',
    );
    const ran = JSON.parse((await npx(['code', 'run', 'hello.yaml', '--json'])).stdout) as {
      exitCode: number;
      stdout: string;
    };
    expect(ran).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^hello from v\d+\.\d+\.\d+\n$/) });
  });

  // Every README but documents' says a TypeScript consumer needs @types/node; the consumers above have it.
  it('type-checks a consumer of @agentproto/documents alone without @types/node, as its README says', async () => {
    const { stdout } = await run(testNode.path, [TSC, '-p', 'tsconfig.documents.json', '--listFiles'], {
      cwd: project,
      timeout: TSC_TIMEOUT,
    });
    const read = stdout.split('\n');
    expect(read).toContain(join(project, 'node_modules', '@agentproto', 'documents', 'dist', 'index.d.ts'));
    expect(read.filter((file) => file.includes(`${sep}@types${sep}node${sep}`))).toEqual([]);
  });

  it('runs agentproto cache put, then finds the object with cache ls', async () => {
    const skill = join(project, 'my-skill');
    const store = join(project, 'store');
    await mkdir(skill);
    await writeFile(join(skill, 'SKILL.md'), '---\nname: my-skill\ndescription: An example.\n---\n');
    const put = JSON.parse((await agentproto(['cache', 'put', skill, '--store', store, '--json'])).stdout) as {
      objectId: string;
      path: string;
      files: number;
      fromCache: boolean;
    };
    expect(put).toMatchObject({ objectId: expect.stringMatching(/^[0-9a-f]{64}$/), files: 1, fromCache: false });
    expect(relative(store, put.path)).not.toMatch(/^\.\./);
    expect(await readFile(join(put.path, 'SKILL.md'), 'utf8')).toBe(
      '---\nname: my-skill\ndescription: An example.\n---\n',
    );
    const ls = JSON.parse((await agentproto(['cache', 'ls', '--store', store, '--json'])).stdout) as {
      objects: { objectId: string }[];
    };
    expect(ls.objects.map(({ objectId }) => objectId)).toEqual([put.objectId]);
  });

  type Documents = typeof import('../../packages/documents/src/index.ts');
  /**
   * The installed @agentproto/documents (its dist/ inlines yaml and smol-toml) and the
   * workspace's source, which imports both packages as they are published.
   */
  const installedAndSource = async (): Promise<{ installed: Documents; source: Documents }> => ({
    installed: (await import(
      pathToFileURL(join(project, 'node_modules', '@agentproto', 'documents', 'dist', 'index.js')).href
    )) as Documents,
    source: (await import('../../packages/documents/src/index.ts')) as Documents,
  });

  it('parse YAML with the yaml they inline as the yaml package itself does: values, errors, positions', async () => {
    const { installed, source } = await installedAndSource();
    const outcome = (documents: Documents, text: string) => {
      try {
        return { value: documents.parseUntrustedYaml(text, { source: 'doc.yaml' }) };
      } catch (error) {
        const { name, message, code, line, column } = error as Record<string, unknown>;
        return { error: { name, message, code, line, column } };
      }
    };
    const texts = [
      'code:\n  sources:\n    - local: src/\n',
      'a: &x [1, 2]\nb: *x\nc: { d: "e\\u00e9", f: 0x1F, g: .inf, h: ~, i: 2001-12-14 }\n',
      'key: value\nkey: again\n',
      '- [unclosed\n',
      'a:\n\t- tab\n',
      '!!binary aGVsbG8=\n',
      '? [complex]\n: key\n',
      '--- a\n--- b\n',
      '%YAML 1.1\n---\nyes: no\n',
      `${'['.repeat(60)}${']'.repeat(60)}\n`,
      'x: "unterminated\n',
      '|\n  literal\n   block\n',
    ];
    // Every YAML file of the repository, whole and cut short at a few places.
    const yamlFiles = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((line) => line !== '');
    for (const file of yamlFiles) {
      const text = await readFile(join(ROOT, file), 'utf8');
      texts.push(
        text,
        ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((tenths) => text.slice(0, Math.floor((text.length * tenths) / 10))),
      );
    }
    expect(texts.length).toBeGreaterThan(20);
    const differing = texts.filter(
      (text) => JSON.stringify(outcome(installed, text)) !== JSON.stringify(outcome(source, text)),
    );
    expect(differing).toEqual([]);
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'ab: -[]{},&*!|>\'"#\n\t?%@`'.split('')), maxLength: 80 }),
        (text) => {
          expect(outcome(installed, text)).toEqual(outcome(source, text));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('parse TOML with the smol-toml they inline as the smol-toml package itself does: values, errors, positions', async () => {
    const { installed, source } = await installedAndSource();
    const outcome = (documents: Documents, text: string) => {
      try {
        // Dates are smol-toml's own date objects: compared by their text.
        return { value: JSON.stringify(documents.parseUntrustedToml(text, { source: 'doc.toml' })) };
      } catch (error) {
        const { name, message, code, line, column, description } = error as Record<string, unknown>;
        return { error: { name, message, code, line, column, description } };
      }
    };
    const texts = [
      '[project]\nname = "tool"\nversion = "1.0"\n[project.scripts]\nrun = "tool:main"\n',
      'a = 1979-05-27T07:32:00Z\nb = 07:32:00\nc = 1979-05-27\nd = inf\ne = nan\nf = 0x1F\n',
      'a.b.c = 1\n[a]\nd = [1, [2, [3]], {e = "f"}]\n',
      'a = 1\na = 2\n',
      'a = "unterminated\n',
      's = """\nmulti\nline"""\nt = \'\'\'lit\'\'\'\n',
      '[[t]]\nx = 1\n[[t]]\nx = 2\n',
      `a = ${'['.repeat(60)}${']'.repeat(60)}\n`,
      'key = \n',
    ];
    const differing = texts.filter(
      (text) => JSON.stringify(outcome(installed, text)) !== JSON.stringify(outcome(source, text)),
    );
    expect(differing).toEqual([]);
    // The cases above hold values and errors both.
    expect(texts.filter((text) => 'error' in outcome(source, text)).length).toBeGreaterThan(1);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'ab=1.[]{},"\'#\n TZ:-'.split('')), maxLength: 60 }), (text) => {
        expect(outcome(installed, text)).toEqual(outcome(source, text));
      }),
      { numRuns: 2_000 },
    );
  });

  // The bin sets --max-opt=1 for `code bundle` at run time; V8 11 (Node 20) honours a tiering
  // flag set then, V8 12 and later read theirs at start (there the bin's call changes nothing).
  it.runIf(Number(process.versions.v8.split('.')[0]) <= 11)(
    "code bundle's own process optimizes nothing with TurboFan, while a host's main() call keeps its V8 as it is",
    async () => {
      const workspace = await bundleWorkspace();
      const optimized = (output: { stdout: string; stderr: string }) =>
        (output.stdout + output.stderr).split('\n').filter((line) => line.startsWith('[completed optimizing')).length;
      const { bin, hosted } = await bundleAsBinAndHost(workspace, ['--trace-opt']);
      expect(bin.stdout).toMatch(/out\.tar\.gz: 600 files, .* sha256 [0-9a-f]{64}\n/);
      expect(hosted.stdout).toMatch(/out\.tar\.gz: 600 files, .* sha256 [0-9a-f]{64}\n/);
      expect({ bin: optimized(bin), hostedAtLeastOne: optimized(hosted) > 0 }).toEqual({
        bin: 0,
        hostedAtLeastOne: true,
      });
    },
  );

  // The bin also keeps V8's new space at the size it has once its code is loaded
  // (--semi-space-growth-factor=1, read by V8 whenever it would grow the space, on every Node
  // from 20 on): a listing of thousands of files made the default V8 grow it.
  it("code bundle's own process keeps V8's new space from growing, while a host's main() call lets it grow", async () => {
    const workspace = await manyFilesWorkspace();
    // Prints the new space's size as the process exits (the bin ends with process.exit).
    const preload = join(workspace, 'new-space.cjs');
    await writeFile(
      preload,
      "process.on('exit', () => require('node:fs').writeSync(2, `new space ${require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size}\\n`));\n",
    );
    const newSpace = (output: { stdout: string; stderr: string }) => {
      expect(output.stdout).toMatch(/out\.tar\.gz: 3000 files, .* sha256 [0-9a-f]{64}\n/);
      return Number(/new space (\d+)/.exec(output.stderr)?.[1]);
    };
    const { bin, hosted } = await bundleAsBinAndHost(workspace, ['-r', preload]);
    expect(newSpace(bin)).toBeGreaterThan(0);
    expect(newSpace(hosted)).toBeGreaterThan(newSpace(bin));
  });
});

/**
 * `code bundle` of `workspace` (its tool.yaml) with the installed CLI twice, each under Node
 * with `nodeArgs`: as the bin's own process, and as a host's `main()` call in its process.
 */
async function bundleAsBinAndHost(
  workspace: string,
  nodeArgs: string[],
): Promise<Record<'bin' | 'hosted', { stdout: string; stderr: string }>> {
  const cli = join(project, 'node_modules', '@agentproto', 'cli', 'dist');
  const args = ['code', 'bundle', join(workspace, 'tool.yaml'), '--out', join(workspace, 'out.tar.gz')];
  const options = { cwd: project, timeout: RUN_TIMEOUT };
  const bin = await run(testNode.path, [...nodeArgs, join(cli, 'bin.cjs'), ...args], options);
  const hosted = await run(
    testNode.path,
    [
      ...nodeArgs,
      '--input-type=module',
      '-e',
      `const { main } = await import(${JSON.stringify(pathToFileURL(join(cli, 'index.js')).href)}); process.exitCode = await main(${JSON.stringify(args)});`,
    ],
    options,
  );
  return { bin, hosted };
}

/** A workspace of 600 small files and a manifest bundling it, made once. */
let madeWorkspace: Promise<string> | undefined;
function bundleWorkspace(): Promise<string> {
  madeWorkspace ??= (async () => {
    const workspace = join(project, 'bundle-workspace');
    for (let i = 0; i < 600; i++) {
      await mkdir(join(workspace, 'src', `d${i % 20}`), { recursive: true });
      await writeFile(
        join(workspace, 'src', `d${i % 20}`, `f${i}.js`),
        `export const value${i} = ${'"x".repeat(40);\n'.repeat(1 + (i % 50))}`,
      );
    }
    await writeFile(join(workspace, 'tool.yaml'), 'code:\n  sources:\n    - local: src/\n');
    return workspace;
  })();
  return madeWorkspace;
}

/** A workspace of 3,000 tiny files (enough entries for a listing to make V8 grow its new space), made once. */
let madeManyFiles: Promise<string> | undefined;
function manyFilesWorkspace(): Promise<string> {
  madeManyFiles ??= (async () => {
    const workspace = join(project, 'many-files-workspace');
    for (let folder = 0; folder < 30; folder++) {
      await mkdir(join(workspace, 'src', `d${folder}`), { recursive: true });
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          writeFile(join(workspace, 'src', `d${folder}`, `f${i}.js`), `export const v${i} = ${folder};\n`),
        ),
      );
    }
    await writeFile(join(workspace, 'tool.yaml'), 'code:\n  sources:\n    - local: src/\n');
    return workspace;
  })();
  return madeManyFiles;
}

function cliVersion(): string | undefined {
  return packed.find(({ name }) => name === '@agentproto/cli')?.manifest.version;
}

/**
 * What a consumer does with the installed tarballs, under one Node binary: import, require, tsc
 * under nodenext, the bin. Every failure names the Node version it ran under.
 */
function consumerChecks(node: () => NodeBinary): void {
  it('imports (ESM) each package from dist/index.js and calls it', async () => {
    const { version } = node();
    const report = await probe(node(), 'probe.mjs');
    for (const { name, fn, result } of CALLS) {
      expect({ version, name, resolved: report[name]?.resolved }).toEqual({
        version,
        name,
        resolved: join(project, 'node_modules', name, 'dist', 'index.js'),
      });
      expect({ version, name, fn, kind: report[name]?.exports[fn] }).toEqual({ version, name, fn, kind: 'function' });
      expect({ version, name, result: report[name]?.result }).toEqual({ version, name, result });
    }
  });

  it('requires (CJS) each package from dist/index.cjs and calls it, with require(esm) turned off', async () => {
    const { version, canTurnOffRequireEsm } = node();
    // Should a newer Node drop the flag, this fails rather than pass without proving anything.
    expect({ version, canTurnOffRequireEsm }).toEqual({ version, canTurnOffRequireEsm: true });
    const report = await probe(node(), 'probe.cjs');
    for (const { name, fn, result } of CALLS) {
      expect({ version, name, resolved: report[name]?.resolved }).toEqual({
        version,
        name,
        resolved: join(project, 'node_modules', name, 'dist', 'index.cjs'),
      });
      expect({ version, name, fn, kind: report[name]?.exports[fn] }).toEqual({ version, name, fn, kind: 'function' });
      expect({ version, name, result: report[name]?.result }).toEqual({ version, name, result });
    }
  });

  it('sees the same exports, of the same kinds, through import and require', async () => {
    const { version } = node();
    const [esm, cjs] = await Promise.all([probe(node(), 'probe.mjs'), probe(node(), 'probe.cjs')]);
    for (const { name } of CALLS) {
      const sorted = (exports: Record<string, string> | undefined) =>
        Object.entries(exports ?? {}).sort(([a], [b]) => a.localeCompare(b));
      expect({ version, name, exports: sorted(cjs[name]?.exports) }).toEqual({
        version,
        name,
        exports: sorted(esm[name]?.exports),
      });
    }
  });

  it(
    'type-checks a strict ESM and a CJS consumer under nodenext, against dist/ types, lib checks on',
    async () => {
      const { version } = node();
      const { stdout } = await run(node().path, [TSC, '-p', 'tsconfig.json', '--listFiles'], {
        cwd: project,
        timeout: TSC_TIMEOUT,
      }).catch((error: Error) => {
        // Diagnostics name files relative to the project; the long file list is absolute: leave it out.
        const [command, ...output] = error.message.split('\n');
        throw new Error(
          [`under Node ${version}: ${command}`, ...output.filter((line) => !isAbsolute(line))].join('\n'),
        );
      });
      // Both declaration files of each package were read: import → index.d.ts, require → index.d.cts.
      const read = new Set(stdout.split('\n'));
      const unread = CALLS.flatMap(({ name }) =>
        ['index.d.ts', 'index.d.cts'].map((types) => join(project, 'node_modules', name, 'dist', types)),
      ).filter((file) => !read.has(file));
      expect({ version, unread }).toEqual({ version, unread: [] });
    },
    TSC_TIMEOUT + 10_000,
  );

  it('runs agentproto --version and --help from node_modules/.bin', async () => {
    const { version } = node();
    // The shebang found this Node: the bin's own code runs under it.
    const { stdout: which } = await run('node', ['--version'], {
      cwd: project,
      timeout: RUN_TIMEOUT,
      env: pathWith(node()),
    });
    expect(which.trim()).toBe(version);
    expect({ version, ...(await agentproto(['--version'], node())) }).toEqual({
      version,
      stdout: `${cliVersion()}\n`,
      stderr: '',
    });
    const help = await agentproto(['--help'], node());
    expect({ version, usage: help.stdout.split('\n', 1)[0], stderr: help.stderr }).toEqual({
      version,
      usage: expect.stringMatching(/^Usage: agentproto /),
      stderr: '',
    });
  });

  it('runs agentproto code bundle from node_modules/.bin: a bundle GNU tar lists, and nothing on stderr', async () => {
    const { version } = node();
    const workspace = await bundleWorkspace();
    const out = join(workspace, `out-${version}.tar.gz`);
    const bundled = await agentproto(['code', 'bundle', join(workspace, 'tool.yaml'), '--out', out], node());
    expect({ version, stderr: bundled.stderr }).toEqual({ version, stderr: '' });
    const { stdout: listing } = await run('tar', ['-tzf', out], { cwd: project, timeout: RUN_TIMEOUT });
    expect({ version, files: listing.split('\n').filter((line) => !line.endsWith('/') && line !== '').length }).toEqual(
      {
        version,
        files: 600,
      },
    );
  });
}

describe(`the installed tarballs under the Node running the tests (${testNode.version})`, () => {
  consumerChecks(() => testNode);
});

for (const release of NODE_RELEASES) {
  describe(`the installed tarballs under Node ${release} (npm's node package)`, () => {
    let node: NodeBinary | undefined;
    beforeAll(async () => {
      node = await fetchNode(release);
    }, NODE_FETCH_TIMEOUT + 10_000);
    consumerChecks(() => {
      if (node === undefined) throw new Error(`Node ${release} was not fetched`);
      return node;
    });
  });
}
