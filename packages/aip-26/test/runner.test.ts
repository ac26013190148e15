import { describe, expect, it } from 'vitest';
import { RunFileMissingError, defineCode, subprocessRunner } from '../src/index.js';
import { makeWorkspace } from './support/workspace.js';

async function bundleOf(files: Record<string, string>): Promise<Buffer> {
  const workspaceRoot = await makeWorkspace({});
  return defineCode({
    workspaceRoot,
    code: { sources: Object.entries(files).map(([path, content]) => ({ inline: { path, content } })) },
  });
}

describe('subprocessRunner (AIP-17 hand-off)', () => {
  it('runs the resolved command in the bundle root and returns exit code and output', async () => {
    const bundle = await bundleOf({
      'tool.js': 'const fs = require("node:fs"); console.log(fs.readFileSync("data.txt", "utf8")); process.exit(3)\n',
      'data.txt': 'from the bundle',
    });
    const result = await subprocessRunner().run({ bundle, run: 'tool.js' });
    expect(result).toMatchObject({ exitCode: 3, timedOut: false });
    expect(result.stdout.toString()).toBe('from the bundle\n');
  });

  it('passes only the environment the host gives', async () => {
    const bundle = await bundleOf({ 'env.js': 'console.log(JSON.stringify(process.env))\n' });
    process.env.AGENTPROTO_HOST_SECRET = 'must-not-leak';
    try {
      const result = await subprocessRunner().run({ bundle, run: { exec: ['node', 'env.js'] }, env: { ONLY: 'this' } });
      expect(JSON.parse(result.stdout.toString())).toEqual({ ONLY: 'this' });
    } finally {
      delete process.env.AGENTPROTO_HOST_SECRET;
    }
  });

  it('kills the whole process group at timeout_ms', async () => {
    const bundle = await bundleOf({ 'slow.sh': 'sleep 30 & sleep 30\n' });
    const started = Date.now();
    const result = await subprocessRunner().run({ bundle, run: 'slow.sh', timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('an abort that comes before the command starts (while the bundle is extracted) ends the run at once', async () => {
    const bundle = await bundleOf({ 'slow.sh': 'sleep 30\n' });
    const started = Date.now();
    const result = await subprocessRunner().run({
      bundle,
      run: 'slow.sh',
      timeoutMs: 20_000,
      signal: AbortSignal.abort(new Error('stop')),
    });
    expect(result).toMatchObject({ timedOut: false, signal: 'SIGKILL' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('runs the shell form with bash -c', async () => {
    const bundle = await bundleOf({ 'a.txt': 'A' });
    const result = await subprocessRunner().run({ bundle, run: 'cat a.txt && echo " ok"' });
    expect(result.stdout.toString()).toBe('A ok\n');
  });

  it('refuses a run file the bundle does not hold, before starting anything', async () => {
    const bundle = await bundleOf({ 'tool.js': '' });
    await expect(subprocessRunner().run({ bundle, run: 'missing.js' })).rejects.toBeInstanceOf(RunFileMissingError);
  });
});
