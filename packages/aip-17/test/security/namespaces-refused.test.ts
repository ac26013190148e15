import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkSandbox } from '@agentproto/sandbox';
import { describe, expect, it } from 'vitest';
import { bundleOf } from '../engines/support.js';

const probe = fileURLToPath(new URL('./fixtures/namespaces-refused.probe.mts', import.meta.url));
const root = fileURLToPath(new URL('../../../../', import.meta.url));

describe('where bubblewrap cannot create namespaces', () => {
  it('run throws SandboxUnavailableError (namespaces-refused), runs nothing and makes no folder', async () => {
    const bundle = await bundleOf({ 'hello.sh': 'echo RAN-ANYWAY' });
    // An outer bubblewrap whose user namespace forbids nested ones (--disable-userns): the
    // kernel itself refuses the runner's sandbox, as in a locked-down container. Its
    // account is not root, so the runner's sandbox would run as that account.
    const result = spawnSync(
      checkSandbox().bwrap,
      [
        ...['--unshare-user', '--uid', '1000', '--gid', '1000', '--disable-userns', '--unshare-pid'],
        ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--chdir', root],
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
    const said = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(said).toEqual({
      ran: false,
      name: 'SandboxUnavailableError',
      code: 'SANDBOX_UNAVAILABLE',
      reason: 'namespaces-refused',
      left: [],
    });
  });
});
