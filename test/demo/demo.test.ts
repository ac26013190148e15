import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildOutcome, runChild, withoutPackageManagerEnv } from './support/child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The temp folder each run gets as TMPDIR: the tour makes its one folder in it and removes it at
 * the end, so afterwards that folder is gone, and nothing the tour printed names a path in it.
 */
let tmp = '';
beforeAll(async () => {
  tmp = await realpath(await mkdtemp(join(tmpdir(), 'agentproto-demo-test-')));
});
afterAll(async () => {
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

/**
 * Our environment with TMPDIR pointed at `tmp`, without the npm_* and pnpm_* variables that
 * `pnpm test` exports (pnpm reads them as its own configuration).
 */
function tourEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return withoutPackageManagerEnv({ TMPDIR: tmp, ...extra });
}

function runIn(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<ChildOutcome> {
  return runChild(file, args, { cwd: root, env });
}

/** Runs the tour (`pnpm demo` without its build step) from the packages' sources. */
function tour(args: string[]) {
  return runIn(
    process.execPath,
    ['--conditions=@agentproto/source', '--import', 'tsx', 'scripts/demo.ts', ...args],
    tourEnv(),
  );
}

/** The run left nothing in its temp folder and named no path in it. */
async function leftNoTrace(output: string): Promise<void> {
  // tsx keeps its compile cache there too (tsx-<uid>): only the tour's own folder must be gone.
  expect((await readdir(tmp)).filter((entry) => entry.startsWith('agentproto-demo-'))).toEqual([]);
  expect(output).not.toContain(tmp);
  expect(output).not.toMatch(/agentproto-demo-/);
}

describe('the tour', () => {
  it('--json: one report on stdout, every part working, exit 0', async () => {
    const { code, stdout, stderr } = await tour(['--json']);
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.ok).toBe(true);
    // AIP-26: four kinds of source, the tag and the branch resolved, the tool ran.
    expect(report.aip26.report.sources.map((s: { kind: string }) => s.kind)).toEqual([
      'inline',
      'local',
      'github',
      'local',
    ]);
    expect(report.aip26.report.workspaces).toEqual(['code-workspaces/format']);
    expect(report.aip26.report.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(report.aip26.resolved.map((r: { ref: string; kind: string }) => [r.ref, r.kind])).toEqual([
      ['v1.0.0', 'tag'],
      ['next', 'branch'],
    ]);
    expect(report.aip26.output).toBe('HELLO, TOUR!');
    // Skills: cold fetched, warm from the store with only the ref listing.
    expect(report.skills.cold.skills.map((s: { from: string }) => s.from)).toEqual(['origin', 'origin']);
    expect(report.skills.warm.skills.map((s: { from: string }) => s.from)).toEqual(['store', 'store']);
    expect(report.skills.warm.gitRequests).toBeLessThan(report.skills.cold.gitRequests);
    // Agent Plugins: built clean, drift caught.
    expect(report.plugin).toMatchObject({
      rejected: false,
      findings: [],
      verifiedAfterBuild: true,
      editedDetected: ['skills/review/references/checklist.md'],
    });
    // The OCI tier runs where the registry is installed (the test command makes sure it is).
    expect(report.oci).toMatchObject({ machineB: { from: 'remote', gitFetches: 0, gitProofFetches: 1 } });
    await leftNoTrace(stdout + stderr);
  });

  it('prints the tour on stdout, nothing on stderr when stderr is not a terminal', async () => {
    const { code, stdout, stderr } = await tour([]);
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
    for (const heading of ['1. AIP-26', '2. Skills', '3. Agent Plugins', '4. The store on an OCI registry', 'Summary'])
      expect(stdout).toContain(heading);
    expect(stdout).not.toContain('\x1b['); // no colour when stdout is not a terminal
    expect(stdout).toContain('HELLO, TOUR!');
    // Paths in the temporary folder are shown relative to it: it is gone when the tour ends.
    expect(stdout).toContain('3. Agent Plugins: acme.tour 1.0.0 (Agent Plugins 1.1.0) at dist/acme.tour\n');
    await leftNoTrace(stdout + stderr);
  });

  // The real entry: builds first only when dist/ is older than src/, and quietly.
  it('pnpm demo starts with the tour: no build output, no path in the removed temp folder', async () => {
    const { code, stdout, stderr } = await runIn('npx', ['-y', 'pnpm@12.4.2', 'demo'], tourEnv());
    expect(code, stdout + stderr).toBe(0);
    expect(stdout.split('\n', 1)[0]).toBe('agentproto tour  (everything in one temporary folder, removed at the end)');
    expect(stdout).toContain('Summary');
    // pnpm names the script it runs on stderr; a build would print tsup's lines there or above the tour.
    expect(stderr).toContain('$ node scripts/demo-start.mjs');
    expect(stdout + stderr).not.toMatch(/tsup|Build success|build\$|DTS |ESM |CJS /);
    await leftNoTrace(stdout + stderr);
  }, 600_000);
});
