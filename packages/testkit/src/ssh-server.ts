import { spawn, type ChildProcess } from 'node:child_process';
import { access, chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { gitOnlyShellScript } from './git-only-shell.js';
import { run } from './run.js';
import { authorizedKeyLine, renderSshdConfig } from './sshd-config.js';
import { tempDir } from './temp-dir.js';

export interface GitSshServerOptions {
  /** Folder whose bare repositories are served: `urlFor('x.git')` is `<root>/x.git`. */
  root: string;
  /** Public key lines (`ssh-ed25519 AAAA… comment`) allowed to log in. */
  authorizedKeys: readonly string[];
  /** Absolute path of sshd; found in the usual sbin folders by default. */
  sshdPath?: string;
}

export interface GitSshServer {
  host: '127.0.0.1';
  port: number;
  /** The account clients log in as: the OS user running the tests (sshd only authenticates real accounts). */
  user: string;
  /** `[127.0.0.1]:PORT ssh-ed25519 AAAA…`, a ready known_hosts line for this server. */
  knownHostsLine: string;
  /** The host key as `ssh-ed25519 AAAA…`, without comment. */
  hostPublicKey: string;
  /** `ssh://<user>@127.0.0.1:PORT/<repo>` */
  urlFor(repo: string): string;
  /** What sshd has logged so far (LogLevel VERBOSE), for failure messages. */
  log(): string;
  /** Stops sshd (SIGTERM, then SIGKILL after 5 s) and removes its temp folder. */
  close(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 15_000;
const BIND_ATTEMPTS = 5;
const LOG_LIMIT = 256 * 1024;

/**
 * A real OpenSSH sshd on a free 127.0.0.1 port that serves `git-upload-pack` for the bare
 * repositories under `root`, and nothing else: each authorized key is bound to a forced
 * command that refuses shells, receive-pack and paths outside `root`. It has its own
 * host key and config in a temp folder; the machine's /etc/ssh is never read.
 *
 * Clients must log in as the current OS user (`server.user`; `root` in containers): sshd
 * only authenticates accounts that exist, so there is no `git@` unless that user exists.
 */
export async function startGitSshServer(options: GitSshServerOptions): Promise<GitSshServer> {
  const sshdPath = options.sshdPath ?? (await findSshd());
  await ensurePrivilegeSeparationDir();
  const dir = await tempDir('testkit-sshd-');
  try {
    const files = await writeServerFiles(dir.path, options);
    const user = userInfo().username;
    const disablePenalties = await sshdHasPenalties(sshdPath);
    const { sshd, port, log } = await launchOnFreePort(
      sshdPath,
      (port) => renderSshdConfig({ ...files, port, user, disablePenalties }),
      files.configPath,
    );
    const knownHostsLine = `[127.0.0.1]:${port} ${files.hostPublicKey}`;
    return {
      host: '127.0.0.1',
      port,
      user,
      knownHostsLine,
      hostPublicKey: files.hostPublicKey,
      urlFor: (repo) => `ssh://${user}@127.0.0.1:${port}/${repo.replace(/^\/+/, '')}`,
      log: () => log.text,
      close: async () => {
        await stopProcess(sshd);
        await dir.cleanup();
      },
    };
  } catch (error) {
    await dir.cleanup();
    throw error;
  }
}

interface ServerFiles {
  configPath: string;
  hostKeyPath: string;
  hostPublicKey: string;
  pidFile: string;
  authorizedKeysFile: string;
}

async function writeServerFiles(dir: string, options: GitSshServerOptions): Promise<ServerFiles> {
  const hostKeyPath = join(dir, 'ssh_host_ed25519_key');
  const commandPath = join(dir, 'git-only.sh');
  const authorizedKeysFile = join(dir, 'authorized_keys');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', hostKeyPath]);
  const hostPublicKey = withoutComment(await readFile(`${hostKeyPath}.pub`, 'utf8'));
  await writeFile(commandPath, gitOnlyShellScript(options.root), { mode: 0o700 });
  const lines = options.authorizedKeys.map((key) => authorizedKeyLine(key, commandPath));
  await writeFile(authorizedKeysFile, lines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
  // writeFile's mode is filtered by the umask; make the modes exact.
  await chmod(commandPath, 0o700);
  await chmod(authorizedKeysFile, 0o600);
  return {
    configPath: join(dir, 'sshd_config'),
    hostKeyPath,
    hostPublicKey,
    pidFile: join(dir, 'sshd.pid'),
    authorizedKeysFile,
  };
}

interface RunningSshd {
  sshd: ChildProcess;
  port: number;
  log: { text: string };
}

/**
 * sshd cannot listen on port 0 and report the port, so a free port is picked first; if
 * another process takes it in between, sshd exits with a bind error and we try another.
 */
async function launchOnFreePort(
  sshdPath: string,
  configFor: (port: number) => string,
  configPath: string,
): Promise<RunningSshd> {
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt += 1) {
    const port = await freePort();
    await writeFile(configPath, configFor(port), { mode: 0o600 });
    try {
      return await launchSshd(sshdPath, configPath, port);
    } catch (error) {
      lastError = error as Error;
      if (!(error instanceof PortTakenError)) throw error;
    }
  }
  throw lastError ?? new Error('sshd did not start');
}

class PortTakenError extends Error {}

async function launchSshd(sshdPath: string, configPath: string, port: number): Promise<RunningSshd> {
  // -D: stay in the foreground so we own the process; -e: log to stderr, which we read.
  const sshd = spawn(sshdPath, ['-D', '-e', '-f', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  const log = { text: '' };
  sshd.stderr?.setEncoding('utf8');
  // Always drained: a full pipe would block sshd (and with it every session) on its next log line.
  sshd.stderr?.on('data', (chunk: string) => {
    log.text = (log.text + chunk).slice(-LOG_LIMIT);
  });
  try {
    await waitForListening(sshd, log, port);
    await waitForTcp(port);
    return { sshd, port, log };
  } catch (error) {
    await stopProcess(sshd);
    throw error;
  }
}

function waitForListening(sshd: ChildProcess, log: { text: string }, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const ready = `Server listening on 127.0.0.1 port ${port}`;
    const timer = setTimeout(
      () => finish(new Error(`sshd did not start within ${STARTUP_TIMEOUT_MS} ms:\n${log.text}`)),
      STARTUP_TIMEOUT_MS,
    );
    const onData = () => {
      if (log.text.includes(ready)) finish();
    };
    // 'exit', not 'close': session processes inherit stderr and can keep it open.
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      const why = `sshd exited with ${signal ?? code} before listening:\n${log.text}`;
      finish(
        /Address already in use|Cannot bind any address/.test(log.text) ? new PortTakenError(why) : new Error(why),
      );
    };
    const onError = (error: Error) => finish(error);
    function finish(error?: Error) {
      clearTimeout(timer);
      sshd.stderr?.off('data', onData);
      sshd.off('exit', onExit);
      sshd.off('error', onError);
      if (error) reject(error);
      else resolve();
    }
    sshd.stderr?.on('data', onData);
    sshd.once('exit', onExit);
    sshd.once('error', onError);
    onData();
  });
}

/** "Server listening" is logged right after listen(); a connect proves clients can reach it. */
export function waitForTcp(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const SSHD_CANDIDATES = ['/usr/sbin/sshd', '/usr/local/sbin/sshd', '/usr/bin/sshd', '/sbin/sshd'];

// sshd re-executes itself per connection and refuses to start unless run by absolute path.
async function findSshd(): Promise<string> {
  for (const candidate of SSHD_CANDIDATES) {
    try {
      await access(candidate);
      return candidate;
    } catch {
      // try the next one
    }
  }
  throw new Error(
    `sshd not found in ${SSHD_CANDIDATES.join(', ')}; install OpenSSH server (Debian: apt-get install openssh-server)`,
  );
}

/** sshd started by root insists on its privilege-separation chroot folder, which only the init script creates. */
async function ensurePrivilegeSeparationDir(): Promise<void> {
  if (process.getuid?.() !== 0) return;
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
}

let penaltiesProbe: Promise<boolean> | undefined;

/** OpenSSH 9.8 added PerSourcePenalties; older versions reject the keyword, so ask the version first. */
function sshdHasPenalties(sshdPath: string): Promise<boolean> {
  penaltiesProbe ??= sshdVersion(sshdPath).then(([major, minor]) => major > 9 || (major === 9 && minor >= 8));
  return penaltiesProbe;
}

async function sshdVersion(sshdPath: string): Promise<[number, number]> {
  // `sshd -V` prints "OpenSSH_9.2, OpenSSL …" on stderr; older sshd print it in their usage text and exit 1.
  const output = await run(sshdPath, ['-V']).then(
    (result) => result.stderr + result.stdout,
    (error: { stderr?: string; stdout?: string }) => `${error.stderr ?? ''}${error.stdout ?? ''}`,
  );
  const match = /OpenSSH_(\d+)\.(\d+)/.exec(output);
  return match ? [Number(match[1]), Number(match[2])] : [0, 0];
}

function withoutComment(publicKeyLine: string): string {
  const [type, key] = publicKeyLine.trim().split(/\s+/);
  if (!type || !key) throw new Error(`unexpected public key: ${publicKeyLine}`);
  return `${type} ${key}`;
}
