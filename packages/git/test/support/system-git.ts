import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { generateSshKey, run, startGitSshServer, type GitSshServer, type SshKeyPair } from '@agentproto/testkit';
import { localCommandHost, type CommandHost } from '../../src/index.js';
import { scratch } from './fixtures.js';

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface RecordedCall {
  argv: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  stdin: string | undefined;
}

export interface RecordingHost {
  host: CommandHost;
  calls: RecordedCall[];
  files: Array<{ path: string; mode: number }>;
  /** Called before each command starts; may abort, stall, … */
  beforeRun?: (call: RecordedCall) => void | Promise<void>;
}

/** localCommandHost(), recording every command (argv, env, stdin) and every file written. */
export function recordingHost(): RecordingHost {
  const real = localCommandHost();
  const recording: RecordingHost = {
    calls: [],
    files: [],
    host: {
      async run(argv, options) {
        const call: RecordedCall = {
          argv: [...argv],
          env: { ...options.env },
          cwd: options.cwd,
          stdin: options.stdin === undefined ? undefined : Buffer.from(options.stdin).toString('utf8'),
        };
        recording.calls.push(call);
        await recording.beforeRun?.(call);
        return real.run(argv, options);
      },
      async writeFile(path, data, options) {
        recording.files.push({ path, mode: options.mode });
        return real.writeFile(path, data, options);
      },
    },
  };
  return recording;
}

/** The git subcommand of a recorded argv: the first word after the `-c …` and `--git-dir=…` options. */
export function subcommand(argv: readonly string[]): string | undefined {
  // A fetch under a pack cap runs as `prlimit --fsize=N -- sh -c '<script>' git …`: git's own argv starts after it.
  const start = argv[0]?.endsWith('prlimit') ? argv.indexOf('sh') + 3 : 0;
  for (let index = start + 1; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '-c') index += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** Every `-c` setting of an argv. */
export function settings(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 1; index < argv.length; index += 1) if (argv[index] === '-c') out.push(argv[index + 1] as string);
  return out;
}

export { renderings, watchProc } from '@agentproto/testkit';

export interface SshSetup {
  server: GitSshServer;
  key: SshKeyPair;
  /** A key the server does not accept. */
  wrongKey: SshKeyPair;
  /** known_hosts holding the server's real key. */
  knownHosts: string;
  /** known_hosts holding another key for the same `[127.0.0.1]:PORT`. */
  wrongKnownHosts: string;
  /** An empty known_hosts file: the server is unknown. */
  emptyKnownHosts: string;
}

/** A testkit sshd serving `root`, a key it accepts, one it does not, and known_hosts files. */
export async function sshSetup(root: string): Promise<SshSetup> {
  const keys = await scratch();
  const key = await generateSshKey({ dir: keys, name: 'good' });
  const wrongKey = await generateSshKey({ dir: keys, name: 'wrong' });
  const server = await startGitSshServer({ root, authorizedKeys: [key.publicKey] });
  cleanups.push(() => server.close());
  const knownHosts = join(keys, 'known_hosts');
  await writeFile(knownHosts, `${server.knownHostsLine}\n`, { mode: 0o600 });
  const other = await generateSshKey({ dir: keys, name: 'other-host' });
  const [type, body] = other.publicKey.split(/\s+/);
  const wrongKnownHosts = join(keys, 'known_hosts_wrong');
  await writeFile(wrongKnownHosts, `[127.0.0.1]:${server.port} ${type} ${body}\n`, { mode: 0o600 });
  const emptyKnownHosts = join(keys, 'known_hosts_empty');
  await writeFile(emptyKnownHosts, '', { mode: 0o600 });
  return { server, key, wrongKey, knownHosts, wrongKnownHosts, emptyKnownHosts };
}

/**
 * An ssh-agent of our own (foreground, `-D`, so we hold its pid and stop exactly it) on
 * a socket in a scratch folder, holding `key`.
 */
export async function startAgent(key: SshKeyPair): Promise<string> {
  const dir = await scratch();
  const socket = join(dir, 'agent.sock');
  const agent: ChildProcess = spawn('ssh-agent', ['-D', '-a', socket], {
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (agent.exitCode !== null || agent.signalCode !== null) return resolve();
        agent.once('exit', () => resolve());
        agent.kill('SIGTERM');
      }),
  );
  for (let attempt = 0; attempt < 100; attempt += 1) {
    try {
      await run('ssh-add', [key.privateKey], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SSH_AUTH_SOCK: socket },
      });
      return socket;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error('ssh-agent did not start');
}

/** Sets environment variables of this process for one test, restored afterwards. */
export function setProcessEnv(values: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  cleanups.push(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}
