import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '@agentproto/testkit';
import { directoryTree, fetchDirectory, listRefs, systemGitEngine } from '../src/index.js';
import { listTree, rejection, scratch } from './support/fixtures.js';
import {
  recordingHost,
  renderings,
  setProcessEnv,
  sshSetup,
  startAgent,
  subcommand,
  watchProc,
} from './support/system-git.js';

async function setup() {
  const root = await scratch();
  const repo = await makeRepo({
    root,
    name: 'skills.git',
    commits: [
      {
        files: {
          'skills/a/SKILL.md': 'a',
          'skills/a/run.sh': { content: 'echo\n', executable: true },
          'other/x.md': 'x',
        },
      },
    ],
    tags: [{ name: 'v1', target: 0, annotated: true }],
  });
  const ssh = await sshSetup(root);
  return { repo, ...ssh, url: ssh.server.urlFor('skills.git') };
}

/** The lines of a private key file that hold key material (not the BEGIN/END markers). */
function keyLines(text: string): string[] {
  return text.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
}

describe('system-git engine over SSH', () => {
  it('lists refs and fetches a directory with the right key and the pinned host key (ssh:// with a port)', async () => {
    const { repo, server, key, knownHosts, url } = await setup();
    expect(url).toMatch(/^ssh:\/\/[^@]+@127\.0\.0\.1:\d+\/skills\.git$/);
    const engine = systemGitEngine({ ssh: { identityFile: key.privateKey, knownHostsFile: knownHosts } });
    const refs = await listRefs(url, { engine });
    expect(refs.refs.find((ref) => ref.name === 'HEAD')).toEqual({
      name: 'HEAD',
      oid: repo.commits[0],
      symref: 'refs/heads/main',
    });
    expect(refs.refs.find((ref) => ref.name === 'refs/tags/v1')?.peeled).toBe(repo.commits[0]);

    const work = await scratch();
    const workDir = join(work, 'w');
    await mkdir(workDir, { mode: 0o700 });
    const tree = await directoryTree(url, repo.commits[0] as string, 'skills/a', { engine, workDir });
    const dest = join(work, 'out');
    const result = await fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest, { engine, workDir });
    expect(result.tree).toBe(tree.tree);
    expect(await listTree(dest)).toEqual({ 'SKILL.md': 'file 644 a', 'run.sh': 'file 755 echo\n' });
    expect(server.log()).toContain('Accepted publickey');
  });

  it('passes ssh nothing but options on its command line: no config file, the one key, no agent, strict pinned host keys', async () => {
    const { repo, key, knownHosts, url } = await setup();
    const recording = recordingHost();
    const engine = systemGitEngine({
      host: recording.host,
      ssh: { identityFile: key.privateKey, knownHostsFile: knownHosts },
    });
    await fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(await scratch(), 'out'), { engine });
    const network = recording.calls.filter((call) => ['fetch', 'ls-remote'].includes(subcommand(call.argv) ?? ''));
    expect(network.length).toBeGreaterThan(0);
    for (const call of network) {
      const command = call.env.GIT_SSH_COMMAND ?? '';
      expect(command.startsWith('ssh -F /dev/null ')).toBe(true);
      for (const option of [
        `'IdentityFile="${key.privateKey}"'`,
        "'IdentitiesOnly=yes'",
        "'IdentityAgent=none'",
        `'UserKnownHostsFile="${knownHosts}"'`,
        "'GlobalKnownHostsFile=/dev/null'",
        "'StrictHostKeyChecking=yes'",
        "'BatchMode=yes'",
        "'ControlMaster=no'",
        "'ControlPath=none'",
        "'PasswordAuthentication=no'",
        "'KbdInteractiveAuthentication=no'",
        "'UpdateHostKeys=no'",
      ]) {
        expect(command).toContain(`-o ${option}`);
      }
      expect(call.env.GIT_SSH_VARIANT).toBe('ssh');
      expect(call.env.SSH_AUTH_SOCK).toBeUndefined();
      expect(call.env.GIT_CONFIG_GLOBAL).toBe('/dev/null');
    }
    expect(recording.files).toEqual([]);
  });

  it("never puts the private key's text into any process's argv or environment, nor into an error", async () => {
    const { repo, key, wrongKey, knownHosts, url } = await setup();
    const canaries = [...keyLines(key.privateKeyText), ...keyLines(wrongKey.privateKeyText)];
    expect(canaries.length).toBeGreaterThan(2);
    const recording = recordingHost();
    const watch = watchProc(canaries);
    let seen;
    let error;
    try {
      await fetchDirectory(url, repo.commits[0] as string, 'skills/a', join(await scratch(), 'out'), {
        engine: systemGitEngine({
          host: recording.host,
          ssh: { identityFile: key.privateKey, knownHostsFile: knownHosts },
        }),
      });
      const wrong = systemGitEngine({
        host: recording.host,
        ssh: { identityFile: wrongKey.privateKey, knownHostsFile: knownHosts },
      });
      error = await rejection(listRefs(url, { engine: wrong }));
    } finally {
      seen = await watch.stop();
    }
    expect(seen.hits).toEqual([]);
    expect(seen.scans).toBeGreaterThan(0);
    // ssh itself was seen by the poller, with the key's path (and only its path).
    expect(seen.processes.some((command) => command.startsWith('ssh ') && command.includes(key.privateKey))).toBe(true);
    expect(recording.calls.length).toBeGreaterThan(3);
    for (const call of recording.calls) {
      for (const text of [...call.argv, ...Object.values(call.env), call.stdin ?? '']) {
        for (const canary of canaries) expect(text).not.toContain(canary);
      }
    }
    for (const text of renderings(error)) for (const canary of canaries) expect(text).not.toContain(canary);
  });

  it('reports a key the server does not accept as GIT_AUTH_FAILED', async () => {
    const { wrongKey, knownHosts, url } = await setup();
    const engine = systemGitEngine({ ssh: { identityFile: wrongKey.privateKey, knownHostsFile: knownHosts } });
    const error = await rejection(listRefs(url, { engine }));
    expect(error).toMatchObject({ code: 'GIT_AUTH_FAILED', url, status: undefined });
    expect(error.message).toContain('accepted no key');
  });

  it.each([
    ['another key for the host', 'wrongKnownHosts'],
    ['no key for the host', 'emptyKnownHosts'],
  ] as const)('reports %s in known_hosts as GIT_HOST_KEY, before any key is offered', async (_what, file) => {
    const setupResult = await setup();
    const { repo, key, url, server } = setupResult;
    const engine = systemGitEngine({ ssh: { identityFile: key.privateKey, knownHostsFile: setupResult[file] } });
    await expect(listRefs(url, { engine })).rejects.toMatchObject({ code: 'GIT_HOST_KEY', url });
    const work = await scratch();
    const privateDir = join(work, 'private');
    await mkdir(privateDir);
    const dest = join(work, 'out');
    await expect(
      fetchDirectory(url, repo.commits[0] as string, 'skills/a', dest, { engine, privateDir }),
    ).rejects.toMatchObject({
      code: 'GIT_HOST_KEY',
    });
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(privateDir)).toEqual([]);
    expect(server.log()).not.toContain('Accepted publickey');
  });

  it('never asks an ssh-agent: with SSH_AUTH_SOCK set to an agent holding the valid key, a wrong configured key still fails', async () => {
    const { key, wrongKey, knownHosts, url } = await setup();
    const socket = await startAgent(key);
    setProcessEnv({ SSH_AUTH_SOCK: socket });
    const engine = systemGitEngine({ ssh: { identityFile: wrongKey.privateKey, knownHostsFile: knownHosts } });
    await expect(listRefs(url, { engine })).rejects.toMatchObject({ code: 'GIT_AUTH_FAILED' });
  });

  it('never reads ~/.ssh/config: a HOME whose ssh config would send the connection elsewhere changes nothing', async () => {
    const { repo, key, knownHosts, url } = await setup();
    const home = await scratch();
    await mkdir(join(home, '.ssh'), { mode: 0o700 });
    await writeFile(
      join(home, '.ssh', 'config'),
      'Host *\n  HostName 192.0.2.1\n  ProxyCommand /bin/false\n  IdentityAgent /nonexistent\n',
      { mode: 0o600 },
    );
    setProcessEnv({ HOME: home });
    const engine = systemGitEngine({ ssh: { identityFile: key.privateKey, knownHostsFile: knownHosts } });
    const refs = await listRefs(url, { engine });
    expect(refs.refs.find((ref) => ref.name === 'refs/heads/main')?.oid).toBe(repo.commits[0]);
  });

  it('accepts the scp-like form of the address', async () => {
    const { repo, server, key, knownHosts } = await setup();
    // sshd needs the port, which scp-like addresses cannot carry: an ssh_config would, but
    // none is read. So this checks the address reaches ssh unchanged and as one argument.
    const recording = recordingHost();
    const engine = systemGitEngine({
      host: recording.host,
      ssh: { identityFile: key.privateKey, knownHostsFile: knownHosts },
    });
    const address = `${server.user}@127.0.0.1:skills.git`;
    const error = await rejection(listRefs(address, { engine }));
    // Port 22 on this machine is not our server: refused or unreachable, never a crash.
    expect(error.code).toMatch(/^GIT_(TRANSPORT|HOST_KEY|AUTH_FAILED)$/);
    const call = recording.calls.find((entry) => subcommand(entry.argv) === 'ls-remote');
    expect(call?.argv.slice(-2)).toEqual(['--', address]);
    expect(repo.commits).toHaveLength(1);
  });

  it('refuses ssh URLs when the engine has no ssh key configured, before running anything', async () => {
    const { url } = await setup();
    const recording = recordingHost();
    const engine = systemGitEngine({ host: recording.host });
    await expect(listRefs(url, { engine })).rejects.toMatchObject({ code: 'GIT_INVALID_ARGUMENT', argument: 'engine' });
    expect(recording.calls).toEqual([]);
  });

  it.each([
    ['a relative key path', { identityFile: 'id_ed25519', knownHostsFile: '/tmp/kh' }],
    ['a quote in a path', { identityFile: "/tmp/it's/key", knownHostsFile: '/tmp/kh' }],
    ['a line break in a path', { identityFile: '/tmp/key', knownHostsFile: '/tmp/k\nh' }],
  ])('refuses ssh files with %s when the engine is made', (_what, ssh) => {
    expect(() => systemGitEngine({ ssh })).toThrow(expect.objectContaining({ code: 'GIT_INVALID_ARGUMENT' }));
  });

  it('handles key paths with spaces and % signs', async () => {
    const { repo, key, knownHosts, url } = await setup();
    const dir = join(await scratch(), 'my keys 100%d');
    await mkdir(dir, { mode: 0o700 });
    const { copyFile, chmod } = await import('node:fs/promises');
    const identityFile = join(dir, 'key %h');
    await copyFile(key.privateKey, identityFile);
    await chmod(identityFile, 0o600);
    const knownHostsFile = join(dir, 'known hosts');
    await copyFile(knownHosts, knownHostsFile);
    const refs = await listRefs(url, { engine: systemGitEngine({ ssh: { identityFile, knownHostsFile } }) });
    expect(refs.refs.find((ref) => ref.name === 'refs/heads/main')?.oid).toBe(repo.commits[0]);
  });
});
