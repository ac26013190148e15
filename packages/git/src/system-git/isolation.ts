import { dirname } from 'node:path';
import { GitInvalidArgumentError } from '../errors.js';

/** Where programs are looked for when no PATH is given and the host is not this machine. */
export const STANDARD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface SshFiles {
  /** Absolute path of the private key, the only one ssh offers. */
  identityFile: string;
  /** Absolute path of a known_hosts file holding the server's key: the only keys trusted. */
  knownHostsFile: string;
}

export interface ChildEnvInput {
  path: string;
  /** The operation's private work folder: HOME, and the ceiling of repository discovery. */
  workDir: string;
  /** A config file holding the request's headers, or undefined for none. */
  globalConfig?: string;
  /** For ssh URLs: the ssh command line, paths only. */
  sshCommand?: string;
}

/**
 * A child's whole environment, built from nothing: this process's variables never reach
 * git, so no SSH_AUTH_SOCK (an agent holding keys of its own), no GIT_ASKPASS/SSH_ASKPASS,
 * no GIT_DIR or GIT_CONFIG_* pointing elsewhere, no proxy or token variables. What is set:
 *
 * - HOME is the private work folder: nothing of the user's home (~/.gitconfig,
 *   ~/.ssh/config, ~/.netrc) is ever read;
 * - GIT_CONFIG_NOSYSTEM and GIT_CONFIG_GLOBAL (the header file, or /dev/null): the only
 *   config git reads besides our own `-c` options and the private gitdir's;
 * - GIT_CEILING_DIRECTORIES: a command run without a gitdir (ls-remote) never walks up
 *   into a repository around the work folder and reads its config (`insteadOf`, …);
 * - GIT_TERMINAL_PROMPT=0: a missing credential fails instead of waiting for a person;
 * - GIT_NO_REPLACE_OBJECTS: replace refs never change what an object id reads as;
 * - LANG/LC_ALL=C: messages in English, which failures are recognized by.
 *
 * It holds paths and switches only, never a credential: whatever is in a child's
 * environment can be read from /proc by the same account.
 */
export function childEnv(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {
    PATH: input.path,
    HOME: input.workDir,
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: input.globalConfig ?? '/dev/null',
    GIT_CEILING_DIRECTORIES: dirname(input.workDir),
    GIT_TERMINAL_PROMPT: '0',
    GIT_LFS_SKIP_SMUDGE: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
  };
  if (input.sshCommand !== undefined) {
    env.GIT_SSH_COMMAND = input.sshCommand;
    env.GIT_SSH_VARIANT = 'ssh';
  }
  return env;
}

/**
 * `-c` options of every command, outranking any config file:
 *
 * - no hooks (`core.hooksPath=/dev/null`; gitdirs are also made with `--template=`, so
 *   there are no sample hooks either), no fsmonitor, no background or automatic gc or
 *   maintenance (a detached process would outlive the command, and the folder);
 * - transports: only the one the URL names; `file` and `ext` (which runs a command)
 *   never, whatever a server or a submodule proposes;
 * - protocol v2, which lets a fetch ask for any object id (blobs of a partial clone);
 * - no redirects: the extra headers would follow them to wherever they point;
 * - no credential helper and no askpass program: credentials come from the header file
 *   or the SSH key, and a missing one fails at once instead of asking anyone;
 * - no submodule recursion.
 */
export function configArgs(scheme: string | undefined): string[] {
  const settings = [
    'core.hooksPath=/dev/null',
    'core.fsmonitor=false',
    'gc.auto=0',
    'gc.autoDetach=false',
    'maintenance.auto=false',
    'protocol.version=2',
    'protocol.allow=never',
    'protocol.file.allow=never',
    'protocol.ext.allow=never',
    ...(scheme === undefined ? [] : [`protocol.${scheme}.allow=always`]),
    'http.followRedirects=false',
    'credential.helper=',
    'core.askPass=',
    'fetch.recurseSubmodules=false',
    'submodule.recurse=false',
    'fetch.writeCommitGraph=false',
  ];
  return settings.flatMap((setting) => ['-c', setting]);
}

/**
 * The config file that carries the request's headers to git, and so to every HTTP request
 * it makes (`http.extraHeader`). It is the one place a credential is written: the file is
 * made with mode 0600 in the private work folder, and git gets its path. Values were
 * checked for CR, LF and NUL by the caller; quotes and backslashes are escaped as git's
 * config syntax wants.
 */
export function headerConfig(headers: Readonly<Record<string, string>>): string {
  const lines = Object.entries(headers).map(
    ([name, value]) => `\textraHeader = "${escapeConfig(`${name}: ${value}`)}"\n`,
  );
  return `[http]\n${lines.join('')}`;
}

function escapeConfig(value: string): string {
  return value.replace(/[\\"]/g, (character) => `\\${character}`);
}

/**
 * The ssh command git runs (through `sh -c`, so every path is single-quoted), configured by
 * options alone:
 *
 * - `-F /dev/null`: no ssh_config is read, neither ~/.ssh/config nor /etc/ssh/ssh_config,
 *   so no Host block can redirect the connection, add a ProxyCommand or another key;
 * - the one key given, and only it (IdentitiesOnly); IdentityAgent=none: an agent holding
 *   a valid key is never asked, whatever SSH_AUTH_SOCK says;
 * - host keys only from the given known_hosts file, strictly: an unknown or changed key
 *   fails, and nothing is ever written back (UpdateHostKeys=no);
 * - BatchMode, no password or keyboard-interactive login: nobody is asked anything;
 * - no connection sharing (ControlMaster/ControlPath) and no forwarding.
 */
export function sshCommand(files: SshFiles): string {
  const key = sshPath(files.identityFile, 'identityFile');
  const knownHosts = sshPath(files.knownHostsFile, 'knownHostsFile');
  const options = [
    `IdentityFile=${key}`,
    'IdentitiesOnly=yes',
    'IdentityAgent=none',
    `UserKnownHostsFile=${knownHosts}`,
    'GlobalKnownHostsFile=/dev/null',
    'StrictHostKeyChecking=yes',
    'BatchMode=yes',
    'ControlMaster=no',
    'ControlPath=none',
    'PasswordAuthentication=no',
    'KbdInteractiveAuthentication=no',
    'UpdateHostKeys=no',
    'ForwardAgent=no',
    'ForwardX11=no',
    'PermitLocalCommand=no',
    'ClearAllForwardings=yes',
  ];
  return ['ssh', '-F', '/dev/null', ...options.flatMap((option) => ['-o', shQuote(option)])].join(' ');
}

/**
 * A path as an ssh option value: absolute (ssh would expand a leading `~`), `%` doubled
 * (ssh expands `%d`, `%h`, … in these options), in double quotes for ssh's own word
 * splitting. Quotes and line breaks are refused rather than escaped: the value passes
 * through two parsers (sh and ssh), and a mistake in either would change the command.
 */
function sshPath(path: string, name: string): string {
  if (typeof path !== 'string' || !path.startsWith('/'))
    throw new GitInvalidArgumentError(`ssh.${name}`, 'must be an absolute path');
  if (/['"\\\r\n\0]/.test(path)) {
    throw new GitInvalidArgumentError(`ssh.${name}`, 'must not contain quotes, backslashes, line breaks or NUL');
  }
  return `"${path.replace(/%/g, '%%')}"`;
}

/** Single quotes for sh; the values here hold no `'`, so this never needs escaping, but stays correct if one does. */
function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
