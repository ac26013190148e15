import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateSshKey,
  makeRepo,
  parseLsRemote,
  run,
  startGitSshServer,
  tempDir,
  type GitSshServer,
  type MadeRepo,
  type SshKeyPair,
  type TempDir,
} from '@agentproto/testkit';
import { git, gitFails } from './support.js';
import { waitForTcp } from '../src/ssh-server.js';

// One sshd for the file: starting one costs ~100 ms, and each test only reads.
let root: TempDir;
let work: TempDir;
let repo: MadeRepo;
let key: SshKeyPair;
let stranger: SshKeyPair;
let server: GitSshServer;
let knownHosts: string;

beforeAll(async () => {
  root = await tempDir('testkit-ssh-root-');
  work = await tempDir('testkit-ssh-work-');
  repo = await makeRepo({
    root: root.path,
    name: 'skills.git',
    commits: [{ message: 'first', files: { 'skills/a/SKILL.md': '---\nname: a\n---\n' } }],
    tags: [{ name: 'v1', target: 'main', annotated: true }],
  });
  key = await generateSshKey();
  stranger = await generateSshKey();
  server = await startGitSshServer({ root: root.path, authorizedKeys: [key.publicKey] });
  knownHosts = join(work.path, 'known_hosts');
  await writeFile(knownHosts, `${server.knownHostsLine}\n`);
});

afterAll(async () => {
  await server?.close();
  await key?.cleanup();
  await stranger?.cleanup();
  await root?.cleanup();
  await work?.cleanup();
});

/** An ssh that reads nothing from the machine: one key, one known_hosts file, no agent, no config. */
function sshCommand(privateKey: string, knownHostsFile: string): string {
  return [
    'ssh',
    `-i ${privateKey}`,
    '-o IdentitiesOnly=yes',
    `-o UserKnownHostsFile=${knownHostsFile}`,
    '-o GlobalKnownHostsFile=/dev/null',
    '-o StrictHostKeyChecking=yes',
    '-o IdentityAgent=none',
    '-o BatchMode=yes',
    '-F /dev/null',
  ].join(' ');
}

describe('startGitSshServer', () => {
  it('gives a known_hosts line in OpenSSH format for a non-standard port and an ssh:// URL for the current user', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.knownHostsLine).toMatch(
      new RegExp(`^\\[127\\.0\\.0\\.1\\]:${server.port} ssh-ed25519 AAAA[A-Za-z0-9+/=]+$`),
    );
    expect(server.knownHostsLine.endsWith(server.hostPublicKey)).toBe(true);
    expect(server.urlFor('skills.git')).toBe(`ssh://${server.user}@127.0.0.1:${server.port}/skills.git`);
  });

  it('serves git ls-remote over protocol v2 to an authorized key with a verified host key', async () => {
    const { stdout, stderr } = await git(['-c', 'protocol.version=2', 'ls-remote', server.urlFor('skills.git')], {
      GIT_SSH_COMMAND: sshCommand(key.privateKey, knownHosts),
      GIT_TRACE_PACKET: '1',
    });

    expect(parseLsRemote(stdout)).toEqual(await repo.refs());
    expect(stderr).toContain('< version 2');
    expect(stderr).toContain('> command=ls-refs');
  });

  it('serves git clone', async () => {
    const target = join(work.path, 'clone');

    await git(['clone', '-q', server.urlFor('skills.git'), target], {
      GIT_SSH_COMMAND: sshCommand(key.privateKey, knownHosts),
    });

    expect((await git(['rev-parse', 'HEAD'], {}, target)).stdout.trim()).toBe(repo.head());
  });

  it('refuses a key that is not authorized', async () => {
    const error = await gitFails(['ls-remote', server.urlFor('skills.git')], {
      GIT_SSH_COMMAND: sshCommand(stranger.privateKey, knownHosts),
    });

    expect(error.stderr).toContain('Permission denied (publickey)');
  });

  it('fails host key verification when known_hosts holds another key for the address', async () => {
    const impostor = await generateSshKey();
    const wrongKnownHosts = join(work.path, 'wrong_known_hosts');
    await writeFile(wrongKnownHosts, `[127.0.0.1]:${server.port} ${impostor.publicKey}\n`);
    await impostor.cleanup();

    const error = await gitFails(['ls-remote', server.urlFor('skills.git')], {
      GIT_SSH_COMMAND: sshCommand(key.privateKey, wrongKnownHosts),
    });

    expect(error.stderr).toContain('Host key verification failed');
  });

  it('refuses any command but git-upload-pack: a shell, a shell command, git-receive-pack, a path out of the root, shell injection', async () => {
    const ssh = (command: string) =>
      run('sh', [
        '-c',
        `${sshCommand(key.privateKey, knownHosts)} -p ${server.port} ${server.user}@127.0.0.1 "$0"`,
        command,
      ]).then(
        () => 'succeeded',
        (error: { stderr: string }) => error.stderr,
      );

    expect(await ssh('echo hi')).toContain('only git-upload-pack is allowed');
    expect(await ssh("git-receive-pack '/skills.git'")).toContain('only git-upload-pack is allowed');
    expect(await ssh("git-upload-pack '/../../etc'")).toContain('must stay inside the served root');
    expect(await ssh("git-upload-pack '/x'; echo pwned; 'y'")).toContain('unsupported characters');
    expect(await ssh('')).toContain('only git-upload-pack is allowed');
  });

  it('refuses git push', async () => {
    const target = join(work.path, 'push-clone');
    await git(['clone', '-q', `${root.path}/skills.git`, target]);

    const error = await gitFails(['-C', target, 'push', server.urlFor('skills.git'), 'HEAD:refs/heads/pushed'], {
      GIT_SSH_COMMAND: sshCommand(key.privateKey, knownHosts),
    });

    expect(error.stderr).toContain('only git-upload-pack is allowed');
  });

  it('close() stops sshd so the port refuses connections', async () => {
    const other = await startGitSshServer({ root: root.path, authorizedKeys: [key.publicKey] });
    expect(other.port).not.toBe(server.port);

    await other.close();

    await expect(waitForTcp(other.port)).rejects.toThrow(/ECONNREFUSED/);
  });
});
