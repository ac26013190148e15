import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the tour (`pnpm demo` without its build step) from the packages' sources. */
function tour(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@agentproto/source', '--import', 'tsx', 'scripts/demo.ts', ...args],
      { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
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
  });

  it('prints the tour on stdout, nothing on stderr when stderr is not a terminal', async () => {
    const { code, stdout, stderr } = await tour([]);
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
    for (const heading of ['1. AIP-26', '2. Skills', '3. Agent Plugins', '4. The store on an OCI registry', 'Summary'])
      expect(stdout).toContain(heading);
    expect(stdout).not.toContain('\x1b['); // no colour when stdout is not a terminal
    expect(stdout).toContain('HELLO, TOUR!');
  });
});
