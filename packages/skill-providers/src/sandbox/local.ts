import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { defaultCacheRoot, makePrivateDir, removePrivateDir, sweepPrivateDirs } from '@agentproto/content-cache';
import { localCommandHost } from '@agentproto/git';
import type { Sandbox, SandboxCapabilities } from './sandbox.js';

export interface LocalSandboxOptions {
  /**
   * The root of private folders, made 0700 if missing (`private/` under the default store
   * root, `defaultCacheRoot()`, by default; prepareSkills passes its store's). Never a
   * workspace, never the system temp folder: everything under it is owned by a process
   * named in an owner record, so what a killed process left is found and removed.
   */
  privateRoot?: string;
  /**
   * Override the detected transports: `{ ssh: false }` makes an HTTPS-only sandbox.
   * By default HTTPS is always there (the pure JavaScript engine needs nothing installed)
   * and SSH when both `git` and `ssh` can be run.
   */
  capabilities?: Partial<SandboxCapabilities>;
}

/**
 * This machine, as the account running the host. Commands run without a shell and with
 * only the environment they are given, so nothing of the host's own environment (an
 * SSH agent socket, a token variable) reaches them unless a caller puts it there; an
 * abort kills a command with everything it started. Files are created, never written
 * through an existing name, with exactly the mode asked for.
 */
export function localSandbox(options: LocalSandboxOptions = {}): Sandbox {
  const privateRoot = options.privateRoot ?? join(defaultCacheRoot(), 'private');
  const git = options.capabilities?.git ?? canRun('git', ['--version']);
  const capabilities: SandboxCapabilities = {
    https: options.capabilities?.https ?? true,
    ssh: options.capabilities?.ssh ?? (git && canRun('ssh', ['-V'])),
    git,
    inProcess: options.capabilities?.inProcess ?? true,
  };
  const host = localCommandHost();
  return {
    name: 'local',
    capabilities,
    run: host.run,
    writeFile: host.writeFile,
    // Each folder is owned by this process (an owner record: pid, start time, boot id), and
    // removal overwrites credential files before unlinking them (see
    // @agentproto/content-cache private-dirs.ts). A folder whose owner was killed is
    // removed the same way by the next sweep: the next preparation, or `cache gc`.
    makePrivateDir: () => makePrivateDir(privateRoot),
    removePrivateDir: (path) => removePrivateDir(path),
    sweepPrivateDirs: () => sweepPrivateDirs(privateRoot),
  };
}

/** Programs found once per process: a sandbox per preparation must not pay a spawn for each. */
const runnable = new Map<string, boolean>();

function canRun(command: string, args: string[]): boolean {
  const path = process.env.PATH ?? '/usr/bin:/bin';
  const known = runnable.get(`${path}\0${command}`);
  if (known !== undefined) return known;
  const result = spawnSync(command, args, { stdio: 'ignore', env: { PATH: path } });
  runnable.set(`${path}\0${command}`, result.status === 0);
  return result.status === 0;
}
