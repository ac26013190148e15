import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localCommandHost } from '@agentproto/git';
import type { Sandbox, SandboxCapabilities } from './sandbox.js';

export interface LocalSandboxOptions {
  /** Parent of private folders; `os.tmpdir()` by default. Never a workspace. */
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
  const privateRoot = options.privateRoot ?? tmpdir();
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
    async makePrivateDir() {
      const dir = await mkdtemp(join(privateRoot, 'agentproto-skill-'));
      await chmod(dir, 0o700);
      return dir;
    },
    async removePrivateDir(path) {
      await rm(path, { recursive: true, force: true, maxRetries: 3 });
    },
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
