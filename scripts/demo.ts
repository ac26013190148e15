/**
 * The tour: every part of the SDK working on this machine, on embedded defaults. Nothing to
 * start by hand and no account: an embedded git server on 127.0.0.1 serves repositories the
 * tour builds on the fly, and everything lives under one temporary folder, removed at the
 * end, so the tour shows paths in it relative to it. Runs against the built packages: `pnpm demo`
 * (scripts/demo-start.mjs) builds the stale ones first, quietly.
 *
 *   1. AIP-26: a manifest mixing inline, local, github (from the embedded server) and
 *      code-workspace sources is materialized into a deterministic tar.gz and run.
 *   2. Skills: prepared from the embedded server into a fresh store, cold then warm.
 *   3. Agent Plugins: a package built from those skills and a stdio server, validated, then
 *      one generated file edited and `verify` catching it.
 *   4. The store's OCI tier, when Debian's docker-registry is installed: a second machine
 *      takes the skill from the registry.
 *
 * `--json` prints one machine-readable report on stdout instead of the tour.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  type BundleReport,
  type ResolvedGithubRef,
  defineCodeWithReport,
  githubConnector,
  subprocessRunner,
} from '@agentproto/aip-26';
import { loadPluginConfig, emitPlugin, validatePlugin, verifyPlugin } from '@agentproto/agent-plugins';
import { type StoreEvent, ociRemote, openContentStore } from '@agentproto/content-cache';
import { type PreparedSkill, localSandbox, prepareSkills } from '@agentproto/skill-providers';
import {
  type GitHttpServer,
  type OciRegistry,
  makeRepo,
  startGitHttpServer,
  startOciRegistry,
} from '@agentproto/testkit';

const json = process.argv.includes('--json');
const tty = process.stderr.isTTY === true && !json;
const paint = (code: string) => (text: string) =>
  process.stdout.isTTY && !json ? `\x1b[${code}m${text}\x1b[0m` : text;
const bold = paint('1');
const dim = paint('2');
const green = paint('32');

/** The tour's own lines: on stdout, unless --json (then stdout holds only the report). */
function say(line = ''): void {
  if (!json) console.log(line);
}

/** Progress on long steps: on stderr, and only when it is a terminal. */
async function step<T>(label: string, work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  if (tty) process.stderr.write(dim(`… ${label}\n`));
  const start = performance.now();
  const value = await work();
  return { value, ms: performance.now() - start };
}

const report: Record<string, unknown> = {};
const work = await mkdtemp(join(tmpdir(), 'agentproto-demo-'));
let git: GitHttpServer | undefined;
let registry: OciRegistry | undefined;
let failed: unknown;
try {
  // --- The embedded git server and its repositories, built on the fly.
  const repos = join(work, 'repos');
  await step('building example repositories', async () => {
    await makeRepo({
      root: repos,
      name: 'acme/tool-shell.git',
      commits: [
        {
          message: 'shell v1',
          files: {
            'lib/greet.mjs': 'export const greet = (name) => `Hello, ${name}!`;\n',
            'README.md': 'A tool shell.\n',
          },
        },
        {
          message: 'shell v2 (on next)',
          files: { 'lib/greet.mjs': 'export const greet = (name) => `Hi there, ${name}!`;\n' },
        },
      ],
      tags: [{ name: 'v1.0.0', target: 0, annotated: true, message: 'release 1.0.0' }],
      branches: [{ name: 'next', from: 1 }],
    });
    await makeRepo({
      root: repos,
      name: 'acme/skills.git',
      commits: [
        {
          message: 'skills',
          files: {
            'skills/review/SKILL.md':
              '---\nname: review\ndescription: Reviews a change against the team checklist. Use when asked for a review.\n---\n\n# Review\n\nRun `scripts/check.sh`, then read references/checklist.md.\n',
            'skills/review/scripts/check.sh': { content: '#!/bin/sh\necho "checks passed"\n', mode: 0o755 },
            'skills/review/references/checklist.md': '- tests\n- docs\n- changelog\n',
            'skills/release/SKILL.md':
              '---\nname: release\ndescription: Cuts a release. Use when asked to ship.\n---\n\n# Release\n\nTag, then publish.\n',
            'README.md': 'Acme skills.\n',
          },
        },
      ],
      tags: [{ name: 'v1', target: 0 }],
    });
  });
  git = await startGitHttpServer({ root: repos });
  say(`${bold('agentproto tour')}  ${dim('(everything in one temporary folder, removed at the end)')}`);
  say(`embedded git server: ${git.url}  serving acme/tool-shell (tag v1.0.0, branch next) and acme/skills (tag v1)`);

  // --- 1. AIP-26: inline, local, github and code-workspace sources in one manifest.
  const workspaceRoot = join(work, 'workspace');
  const workspaceFiles: Record<string, string> = {
    'tools/greet/config.json': '{ "name": "tour" }\n',
    'code-workspaces/format/manifest.yaml':
      'kind: code-workspace\nname: format\ncode:\n  sources:\n    - local: { path: code-workspaces/format/format.mjs, as: shared/format.mjs }\n',
    'code-workspaces/format/format.mjs': 'export const shout = (text) => `${text.toUpperCase()}`;\n',
  };
  for (const [path, text] of Object.entries(workspaceFiles)) {
    await mkdir(dirname(join(workspaceRoot, path)), { recursive: true });
    await writeFile(join(workspaceRoot, path), text);
  }
  const manifest = {
    kind: 'tool',
    name: 'greet',
    code: {
      sources: [
        {
          inline: {
            path: 'main.mjs',
            content: [
              "import { readFileSync } from 'node:fs';",
              "import { greet } from './lib/greet.mjs';",
              "import { shout } from './shared/format.mjs';",
              "const { name } = JSON.parse(readFileSync('config.json', 'utf8'));",
              'console.log(shout(greet(name)));',
              '',
            ].join('\n'),
          },
        },
        { local: { path: 'tools/greet/config.json', as: 'config.json' } },
        { github: { repo: 'acme/tool-shell', ref: 'v1.0.0', path: 'lib', as: 'lib' } },
        { ref: './code-workspaces/format' },
      ],
    },
    run: 'main.mjs',
  };
  const store = await openContentStore({ root: join(work, 'store') });
  const resolved: ResolvedGithubRef[] = [];
  const github = githubConnector({
    baseUrl: git.url,
    cache: store,
    git: { allowInsecureHttp: true },
    onResolved: (r) => resolved.push(r),
  });
  const { value: bundled, ms: bundleMs } = await step('materializing the AIP-26 bundle', () =>
    defineCodeWithReport({ code: manifest.code, workspaceRoot, github, cache: store }),
  );
  // A host records what floating refs resolved to; a branch is resolved on every scan.
  await github.resolveRef('acme/tool-shell', 'next');
  const { value: ran } = await step('running it through the subprocess runner', () =>
    subprocessRunner({ workDir: work }).run({
      bundle: bundled.bundle,
      run: manifest.run,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeoutMs: 30_000,
    }),
  );
  const output = ran.stdout.toString('utf8').trim();
  if (ran.exitCode !== 0 || output !== 'HELLO, TOUR!')
    throw new Error(
      `the tool did not run as expected: exit ${ran.exitCode}, ${JSON.stringify(output)} ${ran.stderr.toString('utf8')}`,
    );
  say(`\n${bold('1. AIP-26')}: a manifest with inline, local, github and code-workspace sources`);
  for (const source of bundled.report.sources) {
    say(
      `   ${source.source.padEnd(50)} ${source.kind.padEnd(7)} ${String(source.files).padStart(2)} file(s) ${String(source.bytes).padStart(4)} B${source.commit ? `  commit ${source.commit.slice(0, 12)}` : ''}`,
    );
  }
  for (const r of resolved) say(`   resolved ${r.repo}@${r.ref} (${r.kind}) -> ${r.commit}`);
  say(
    `   bundle: ${bundled.report.files} files, ${bundled.bundle.length} B tar.gz, sha256 ${bundled.report.sha256}  (${bundleMs.toFixed(0)} ms)`,
  );
  say(`   run main.mjs -> ${green(output)}  (exit ${ran.exitCode}, ${ran.durationMs.toFixed(0)} ms)`);
  report.aip26 = { report: summarizeBundle(bundled.report), resolved, output, exitCode: ran.exitCode };

  // --- 2. Skills: cold, then warm, from the embedded server.
  const declaration = [
    `${git.urlFor('acme/skills.git')}@v1#skills/review`,
    `${git.urlFor('acme/skills.git')}@v1#skills/release`,
  ];
  await mkdir(join(work, 'private'));
  const sandbox = localSandbox({ privateRoot: join(work, 'private') });
  const skillStore = await openContentStore({ root: join(work, 'skill-store') });
  const prepare = async (label: string) => {
    git!.resetStats();
    const { value, ms } = await step(`${label} preparation of ${declaration.length} skills`, () =>
      prepareSkills(declaration, { cache: skillStore, sandbox }),
    );
    return { skills: value, ms, requests: git!.stats.requests, bytes: git!.stats.bytesServed };
  };
  const cold = await prepare('cold');
  const warm = await prepare('warm');
  say(`\n${bold('2. Skills')}: ${declaration.length} skills from the embedded server into a fresh store`);
  say(
    `   cold: ${describeSkills(cold.skills)}; ${cold.requests} requests, ${cold.bytes} B from git, ${cold.ms.toFixed(0)} ms`,
  );
  say(
    `   warm: ${describeSkills(warm.skills)}; ${warm.requests} requests (the ref listing that authorizes), ${warm.bytes} B, ${warm.ms.toFixed(0)} ms`,
  );
  say(`   review is at ${inTour(cold.skills[0]!.dir)}`);
  report.skills = { cold: preparation(cold), warm: preparation(warm) };

  // --- 3. Agent Plugins: a package from those skills and a stdio server.
  const pluginSource = join(work, 'plugin-source');
  for (const skill of cold.skills)
    await cp(skill.dir, join(pluginSource, 'content/skills', skill.name), { recursive: true, dereference: true });
  await mkdir(join(pluginSource, 'content/bin'), { recursive: true });
  await writeFile(
    join(pluginSource, 'content/bin/acme-mcp.mjs'),
    '#!/usr/bin/env node\n// A stdio MCP server would speak JSON-RPC here.\nprocess.stdin.pipe(process.stdout);\n',
  );
  await chmod(join(pluginSource, 'content/bin/acme-mcp.mjs'), 0o755);
  await writeFile(
    join(pluginSource, 'plugin.toml'),
    [
      '[plugin]',
      'name = "acme.tour"',
      'version = "1.0.0"',
      'description = "The tour\'s skills and a stdio server."',
      'content_root = "content"',
      'include = ["bin/**"]',
      '',
      '[[plugin.mcp]]',
      'name = "acme-mcp"',
      'command = "./bin/acme-mcp.mjs"',
      'args = ["--root", "${PLUGIN_ROOT}"]',
      '',
    ].join('\n'),
  );
  const { config, contentRoot } = await loadPluginConfig(join(pluginSource, 'plugin.toml'));
  const packageDir = join(work, 'dist/acme.tour');
  const { value: emitted } = await step('building the Agent Plugins package', () =>
    emitPlugin(config, packageDir, { contentRoot, spec: '1.1.0' }),
  );
  const validation = await validatePlugin(packageDir);
  const before = await verifyPlugin(packageDir, config, { contentRoot, spec: '1.1.0' });
  const edited = 'skills/review/references/checklist.md';
  await appendFile(join(packageDir, edited), '- an edit made by hand after generation\n');
  const after = await verifyPlugin(packageDir, config, { contentRoot, spec: '1.1.0' });
  if (!before.ok || after.ok || !after.edited.includes(edited))
    throw new Error(`verify did not behave: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
  say(`\n${bold('3. Agent Plugins')}: acme.tour 1.0.0 (Agent Plugins ${validation.spec}) at ${inTour(packageDir)}`);
  say(
    `   files: ${emitted.files.length}; skills: ${validation.skills.join(', ')}; servers: ${validation.servers.join(', ')}`,
  );
  say(`   findings: ${validation.findings.length === 0 ? 'none' : ''}`);
  for (const finding of validation.findings)
    say(`     ${finding.severity} ${finding.code} ${finding.path}: ${finding.message}`);
  say(`   verify right after the build: ${before.ok ? green('ok') : 'drift'}`);
  say(`   after editing ${edited} by hand: drift, edited: ${after.edited.join(', ')}`);
  report.plugin = {
    spec: validation.spec,
    rejected: validation.rejected,
    findings: validation.findings.map(({ code, severity, path }) => ({ code, severity, path })),
    verifiedAfterBuild: before.ok,
    editedDetected: after.edited,
  };

  // --- 4. The OCI tier: two machines sharing one registry (only when one can be started here).
  if (registryAvailable()) {
    registry = await startOciRegistry({ storageDir: join(work, 'registry') });
    const machine = async (name: string) => {
      const events: StoreEvent[] = [];
      const machineStore = await openContentStore({
        root: join(work, name),
        remote: ociRemote({ url: registry!.url, repository: 'tour/cache', allowInsecureHttp: true }),
        onEvent: (event) => events.push(event),
      });
      return { store: machineStore, events };
    };
    const a = await machine('machine-a');
    const { ms: aMs } = await step('machine A: cold preparation, pushed to the registry', async () => {
      await prepareSkills(declaration.slice(0, 1), { cache: a.store, sandbox });
      await a.store.remoteIdle();
    });
    const b = await machine('machine-b');
    git.resetStats();
    const { value: fromRegistry, ms: bMs } = await step('machine B: preparation from the registry', () =>
      prepareSkills(declaration.slice(0, 1), { cache: b.store, sandbox }),
    );
    // B believes the registry in nothing: it asks git for the commit and the trees on the way
    // to the skill (no file content, a tree-depth filter) and takes the registry's files only
    // if they hash to that tree id. Fetches for file content are counted apart.
    const posts = git.stats.log.filter((entry) => entry.method === 'POST' && entry.command !== 'ls-refs');
    const proofs = posts.filter((entry) => /^combine:blob:none\+tree:\d+$|^tree:0$/.test(entry.filter ?? '')).length;
    const fetches = posts.length - proofs;
    say(`\n${bold('4. The store on an OCI registry')}: ${registry.url} (CNCF distribution)`);
    say(
      `   machine A: from git, pushed (${aMs.toFixed(0)} ms); machine B: from the ${fromRegistry[0]!.from === 'remote' ? 'registry' : fromRegistry[0]!.from} (${bMs.toFixed(0)} ms), proven against ${proofs} trees-only fetch from git, ${fetches} fetch requests for content`,
    );
    report.oci = {
      machineA: { ms: Math.round(aMs) },
      machineB: { from: fromRegistry[0]!.from, ms: Math.round(bMs), gitFetches: fetches, gitProofFetches: proofs },
    };
  } else {
    say(
      `\n${bold('4. The store on an OCI registry')}: ${dim("skipped: install Debian's docker-registry (CNCF distribution) to see two machines share a store")}`,
    );
    report.oci = { skipped: 'docker-registry is not installed' };
  }

  say(`\n${bold('Summary')}`);
  say(
    `   ${green('ok')} AIP-26 bundle ${bundled.report.sha256.slice(0, 16)}… ran and printed ${JSON.stringify(output)}`,
  );
  say(`   ${green('ok')} skills: cold ${cold.requests} requests / warm ${warm.requests} requests to git`);
  say(`   ${green('ok')} plugin built, ${validation.findings.length} finding(s), drift caught after a hand edit`);
  if (report.oci && !(report.oci as { skipped?: string }).skipped)
    say(`   ${green('ok')} a second machine took the skill from the OCI registry`);
} catch (error) {
  failed = error;
} finally {
  await git?.close();
  await registry?.close();
  await rm(work, { recursive: true, force: true });
}

if (failed !== undefined) {
  const message = failed instanceof Error ? failed.message : String(failed);
  const code = (failed as { code?: unknown }).code;
  if (json)
    console.log(
      JSON.stringify({ ok: false, error: { code: typeof code === 'string' ? code : undefined, message } }, null, 2),
    );
  console.error(`demo failed: ${typeof code === 'string' ? `${code}: ` : ''}${message}`);
  process.exit(1);
}
if (json) console.log(JSON.stringify({ ok: true, ...report }, null, 2));

/** A path in the temporary folder as the tour shows it: relative, since the folder is gone once it ends. */
function inTour(path: string): string {
  return relative(work, path).split(sep).join('/');
}

function describeSkills(skills: PreparedSkill[]): string {
  return skills.map((s) => `${s.name} ${s.from === 'origin' ? 'fetched' : `from the ${s.from}`}`).join(', ');
}

function preparation(run: { skills: PreparedSkill[]; ms: number; requests: number; bytes: number }) {
  return {
    skills: run.skills.map(({ name, version, contentId, from }) => ({ name, version, contentId, from })),
    gitRequests: run.requests,
    gitBytes: run.bytes,
    ms: Math.round(run.ms),
  };
}

function summarizeBundle(bundleReport: BundleReport) {
  return {
    sha256: bundleReport.sha256,
    files: bundleReport.files,
    bytes: bundleReport.bytes,
    sources: bundleReport.sources.map(({ source, kind, commit, files, bytes }) => ({
      source,
      kind,
      commit,
      files,
      bytes,
    })),
    workspaces: bundleReport.workspaces,
  };
}

/** The registry binary the testkit starts, when this machine has it. */
function registryAvailable(): boolean {
  return (
    ['/usr/bin/docker-registry', '/usr/local/bin/registry'].some((path) => existsSync(path)) ||
    spawnSync('sh', ['-c', 'command -v docker-registry'], { stdio: 'ignore' }).status === 0
  );
}
