import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkSandbox } from '@agentproto/sandbox';
import { describe, expect, it } from 'vitest';
import { bundleOf } from '../engines/support.js';

const probe = fileURLToPath(new URL('./fixtures/namespaces-refused.probe.mts', import.meta.url));
const root = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Runs the probe inside an outer bubblewrap as account 1000 (not root, so the runner's
 * sandbox runs as that account). With `refuse`, the outer user namespace forbids nested
 * ones (--disable-userns): the kernel itself refuses the runner's sandbox (ENOSPC), as in a
 * locked-down container. Without it, the same probe runs: the outer sandbox alone changes
 * nothing, so the refusal is what the first case sees.
 */
function probeIn(refuse: boolean, bundle: Buffer) {
  const result = spawnSync(
    checkSandbox().bwrap,
    [
      ...['--unshare-user', '--uid', '1000', '--gid', '1000', ...(refuse ? ['--disable-userns'] : [])],
      // /tmp is the box's own; the checkout is bound back, read-only, where it may live under /tmp.
      ...['--dev-bind', '/', '/', '--tmpfs', '/tmp', '--ro-bind', root, root, '--chdir', root],
      '--',
      process.execPath,
      '--conditions=@agentproto/source',
      '--import',
      'tsx',
      probe,
      bundle.toString('base64'),
    ],
    { encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' } },
  );
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}');
}

describe('where bubblewrap cannot create namespaces', () => {
  it('run throws SandboxUnavailableError (namespaces-refused), runs nothing and makes no folder', async () => {
    const bundle = await bundleOf({ 'hello.sh': 'echo RAN-ANYWAY' });
    const said = probeIn(true, bundle);
    expect(said).toEqual({
      ran: false,
      name: 'SandboxUnavailableError',
      code: 'SANDBOX_UNAVAILABLE',
      reason: 'namespaces-refused',
      detail: expect.stringMatching(/Creating new namespace failed.*ENOSPC/),
      left: [],
    });
  });

  it('the same probe in the same outer sandbox, nested namespaces allowed, runs the bundle', async () => {
    const bundle = await bundleOf({ 'hello.sh': 'echo RAN-ANYWAY' });
    expect(probeIn(false, bundle)).toEqual({ ran: true, stdout: 'RAN-ANYWAY\n', left: [] });
  });
});
