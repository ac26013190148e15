import { shQuote } from './git-only-shell.js';

export interface SshdConfigInput {
  port: number;
  hostKeyPath: string;
  pidFile: string;
  authorizedKeysFile: string;
  /** The one account allowed to log in. */
  user: string;
  /** sshd 9.8+ penalises addresses whose logins fail; tests fail logins on purpose. */
  disablePenalties: boolean;
}

/**
 * A self-contained sshd_config: nothing from /etc/ssh is read (no Include), so the
 * machine's own sshd settings cannot change a test.
 */
export function renderSshdConfig(input: SshdConfigInput): string {
  const lines = [
    'ListenAddress 127.0.0.1',
    `Port ${input.port}`,
    `HostKey ${input.hostKeyPath}`,
    `PidFile ${input.pidFile}`,
    `AuthorizedKeysFile ${input.authorizedKeysFile}`,
    // StrictModes checks every folder up to / when the keys file is outside the user's
    // home, and /tmp is world-writable. The files are 0600 in a 0700 folder anyway.
    'StrictModes no',
    `AllowUsers ${input.user}`,
    // Needed when the tests run as root (containers, CI); ignored for other users.
    'PermitRootLogin prohibit-password',
    'AuthenticationMethods publickey',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'HostbasedAuthentication no',
    'GSSAPIAuthentication no',
    'UsePAM no',
    'PermitEmptyPasswords no',
    // git sends GIT_PROTOCOL=version=2 with SendEnv; upload-pack needs it to speak v2.
    'AcceptEnv GIT_PROTOCOL',
    'PermitUserEnvironment no',
    'PermitUserRC no',
    'PermitTTY no',
    'AllowTcpForwarding no',
    'AllowStreamLocalForwarding no',
    'AllowAgentForwarding no',
    'X11Forwarding no',
    'PermitTunnel no',
    'PrintMotd no',
    'PrintLastLog no',
    'UseDNS no',
    'LogLevel VERBOSE',
    // Parallel test files may open many sessions at once; the default starts dropping at 10.
    'MaxStartups 100:30:200',
  ];
  if (input.disablePenalties) lines.push('PerSourcePenalties no');
  return `${lines.join('\n')}\n`;
}

/**
 * One authorized_keys line: the key, locked to the git-only forced command and stripped
 * of everything a git client does not need.
 */
export function authorizedKeyLine(publicKey: string, commandPath: string): string {
  const key = publicKey.trim();
  if (key === '' || /[\r\n]/.test(key)) throw new Error(`not a single public key line: ${JSON.stringify(publicKey)}`);
  // Inside command="…" only " and \ need escaping; the path itself is quoted for the shell.
  const command = shQuote(commandPath).replace(/[\\"]/g, (c) => `\\${c}`);
  const options = [
    `command="${command}"`,
    'no-port-forwarding',
    'no-X11-forwarding',
    'no-agent-forwarding',
    'no-pty',
    'no-user-rc',
  ];
  return `${options.join(',')} ${key}`;
}
