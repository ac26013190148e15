import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SandboxSetupError,
  SandboxUnavailableError,
  checkSandbox,
  runIsolated,
  startEgressProxy,
} from '../src/index.js';
import { PATH, testFolder } from './support.js';

const folder = testFolder('unavailable');
afterAll(() => folder.remove());
const source = join(import.meta.dirname, '..', 'src', 'index.ts');
const workspace = join(import.meta.dirname, '..', '..', '..');

describe('when isolation cannot be had: a typed error, never a run without it', () => {
  it('this machine can isolate (the cases below are about other machines)', () => {
    const support = checkSandbox();
    expect(support.bwrap).toMatch(/\/bwrap$/);
    expect(support.version).toMatch(/^\d+\.\d+/);
    expect(support.socat).toMatch(/\/socat$/);
  });

  it('no bwrap on PATH: SANDBOX_UNAVAILABLE, reason bwrap-missing', () => {
    const empty = folder.readable('empty-path');
    let error: unknown;
    try {
      checkSandbox({ path: empty });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect(error).toMatchObject({ code: 'SANDBOX_UNAVAILABLE', reason: 'bwrap-missing' });
  });

  it('the kernel refuses namespaces (nested user namespaces disabled): reason namespaces-refused, and nothing runs', () => {
    const script = join(folder.root, 'refused.mts');
    writeFileSync(
      script,
      `import { checkSandbox, runIsolated } from ${JSON.stringify(source)};
const out: Record<string, unknown> = {};
try {
  checkSandbox({ runAs: { uid: process.getuid!(), gid: process.getgid!() } });
  out.check = 'isolated';
} catch (error) {
  out.check = { name: (error as Error).name, code: (error as { code?: string }).code, reason: (error as { reason?: string }).reason, detail: (error as { detail?: string }).detail };
}
try {
  await runIsolated({ argv: ['/bin/sh', '-c', 'echo ran'] });
  out.run = 'ran';
} catch (error) {
  out.run = { code: (error as { code?: string }).code, reason: (error as { reason?: string }).reason };
}
console.log(JSON.stringify(out));
`,
    );
    chmodSync(script, 0o644);
    // An outer bubblewrap that forbids further user namespaces: the kernel then refuses them
    // for real (ENOSPC), as on machines where they are disabled.
    const result = spawnSync(
      checkSandbox().bwrap,
      [
        '--unshare-user',
        '--disable-userns',
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--unshare-pid',
        '--',
        process.execPath,
        '--import',
        'tsx',
        script,
      ],
      { cwd: workspace, encoding: 'utf8', timeout: 60_000 },
    );
    expect(result.stderr).toBe('');
    const out = JSON.parse(result.stdout) as { check: Record<string, string>; run: Record<string, string> };
    expect(out.check).toMatchObject({
      name: 'SandboxUnavailableError',
      code: 'SANDBOX_UNAVAILABLE',
      reason: 'namespaces-refused',
    });
    expect(out.check.detail).toMatch(/Creating new namespace failed.*ENOSPC/);
    expect(out.run).toMatchObject({ code: 'SANDBOX_UNAVAILABLE', reason: 'namespaces-refused' });
  });

  it('an egress bridge that cannot start (socat unusable inside): SandboxSetupError, and the command never runs', async () => {
    const support = checkSandbox();
    const broken = join(folder.readable('broken'), 'socat');
    writeFileSync(broken, '', { mode: 0o644 });
    const scratch = folder.writable('bridge-scratch');
    const egress = await startEgressProxy();
    try {
      const error = await runIsolated({
        argv: ['/bin/sh', '-c', 'echo ran > /scratch/ran'],
        env: { PATH },
        mounts: [
          { source: broken, target: support.socat as string },
          { source: scratch, target: '/scratch', writable: true },
        ],
        egress,
        timeoutMs: 30_000,
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SandboxSetupError);
      expect((error as SandboxSetupError).detail).toMatch(/egress bridge/);
      expect(spawnSync('ls', [scratch], { encoding: 'utf8' }).stdout).toBe('');
    } finally {
      await egress.close();
    }
  });
});
