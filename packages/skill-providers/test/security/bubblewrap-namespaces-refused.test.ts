import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkSandbox } from '@agentproto/sandbox';
import { describe, expect, it } from 'vitest';

const probe = fileURLToPath(new URL('./fixtures/bubblewrap-refused.probe.mts', import.meta.url));
const root = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Makes a bubblewrapSandbox inside an outer bubblewrap as account 1000. With `refuse`, the
 * outer user namespace forbids nested ones (--disable-userns): the kernel itself refuses
 * the skill sandbox's namespaces (ENOSPC), as in a locked-down container. Without it, the
 * same probe makes its sandbox: the outer sandbox alone changes nothing.
 */
function probeIn(refuse: boolean) {
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
      '/tmp/private',
    ],
    { encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' } },
  );
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}');
}

describe('bubblewrapSandbox where the kernel refuses namespaces', () => {
  it('cannot be made: SKILL_SANDBOX_UNAVAILABLE naming namespaces, never a sandbox without isolation', () => {
    expect(probeIn(true)).toEqual({
      made: false,
      name: 'SandboxIsolationUnavailableError',
      code: 'SKILL_SANDBOX_UNAVAILABLE',
      missing: 'namespaces',
      detail: expect.stringMatching(/Creating new namespace failed.*ENOSPC/),
    });
  });

  it('the same probe in the same outer sandbox, nested namespaces allowed, makes its sandbox', () => {
    expect(probeIn(false)).toEqual({ made: true, name: 'bubblewrap' });
  });
});
