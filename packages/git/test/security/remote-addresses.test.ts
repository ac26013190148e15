import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, watchProc } from '@agentproto/testkit';
import {
  directoryTree,
  expandCommit,
  fetchDirectory,
  isomorphicGitEngine,
  listRefs,
  normalizeRemoteUrl,
  systemGitEngine,
} from '../../src/index.js';
import { rejection, scratch } from '../support/fixtures.js';
import { recordingHost } from '../support/system-git.js';

/**
 * Every address git would hand to something other than its https, http or ssh transports:
 * remote helpers (`<transport>::<address>`, which git turns into `git-remote-<transport>`:
 * `ext::` runs a command, `fd::` talks to a descriptor, `file::` reads this disk), schemes we
 * do not speak, and local paths. `repo` is a real repository on this disk, so that `file`
 * forms would work if anything let them through.
 */
function refusedForms(repo: string, canary: string): Array<[string, string]> {
  return [
    [`ext::sh`, 'GIT_UNSUPPORTED_URL'],
    [`ext::${canary}`, 'GIT_UNSUPPORTED_URL'],
    [`ext::git-upload-pack%20${repo}`, 'GIT_UNSUPPORTED_URL'],
    [`EXT::${canary}`, 'GIT_UNSUPPORTED_URL'],
    [`fd::3`, 'GIT_UNSUPPORTED_URL'],
    [`fd::0,1/${canary}`, 'GIT_UNSUPPORTED_URL'],
    [`file::${repo}`, 'GIT_UNSUPPORTED_URL'],
    [`::${repo}`, 'GIT_UNSUPPORTED_URL'],
    [`x+y.z-1::${canary}`, 'GIT_UNSUPPORTED_URL'],
    [`https::https://127.0.0.1/${canary}.git`, 'GIT_UNSUPPORTED_URL'],
    [`ssh::git@127.0.0.1:${canary}.git`, 'GIT_UNSUPPORTED_URL'],
    [`file://${repo}`, 'GIT_UNSUPPORTED_URL'],
    [`git://127.0.0.1/${canary}.git`, 'GIT_UNSUPPORTED_URL'],
    [`git+ssh://127.0.0.1/${canary}.git`, 'GIT_UNSUPPORTED_URL'],
    [`ssh+git://127.0.0.1/${canary}.git`, 'GIT_UNSUPPORTED_URL'],
    [`ftp://127.0.0.1/${canary}.git`, 'GIT_UNSUPPORTED_URL'],
    [`${canary}://127.0.0.1/x.git`, 'GIT_UNSUPPORTED_URL'],
    [repo, 'GIT_INVALID_URL'],
    [`./${canary}`, 'GIT_INVALID_URL'],
  ];
}

describe('remote addresses: only https, http and ssh ever reach a process', () => {
  it('refuses remote-helper syntax, other schemes and local paths with a typed error, and starts no process for any of them', async () => {
    const root = await scratch();
    const made = await makeRepo({ root, name: 'local.git', commits: [{ files: { 'skills/a/SKILL.md': 'a' } }] });
    const canary = `canary${randomBytes(6).toString('hex')}`;
    const recording = recordingHost();
    const system = systemGitEngine({
      host: recording.host,
      ssh: { identityFile: '/nonexistent/key', knownHostsFile: '/nonexistent/known_hosts' },
    });
    const watch = watchProc([canary, made.path]);
    const work = await scratch();
    try {
      for (const [address, code] of refusedForms(made.path, canary)) {
        for (const engine of [system, isomorphicGitEngine()]) {
          const dest = join(work, 'out');
          const errors = [
            await rejection(listRefs(address, { engine })),
            await rejection(
              directoryTree(address, made.commits[0] as string, 'skills/a', { engine, privateDir: work }),
            ),
            await rejection(
              fetchDirectory(address, made.commits[0] as string, 'skills/a', dest, { engine, privateDir: work }),
            ),
            await rejection(expandCommit(address, 'abcd', { engine, privateDir: work })),
          ];
          for (const error of errors) expect(error, address).toMatchObject({ code });
          expect(existsSync(dest)).toBe(false);
        }
        expect(
          () => normalizeRemoteUrl(address, { protocols: ['https:', 'http:', 'ssh:'], allowInsecureHttp: true }),
          address,
        ).toThrow(expect.objectContaining({ code }));
      }
    } finally {
      const seen = await watch.stop();
      expect(seen.scans).toBeGreaterThan(0);
      expect(seen.hits).toEqual([]);
    }
    // Not one command ran: the refusal comes before any process, not from git's protocol.allow.
    expect(recording.calls.map((call) => call.argv.join(' '))).toEqual([]);
    expect(recording.files).toEqual([]);
  });

  it('names the remote helper in the error, and never confuses it with a host name', () => {
    expect(() => normalizeRemoteUrl('ext::sh', { protocols: ['https:', 'ssh:'] })).toThrow(
      expect.objectContaining({ code: 'GIT_UNSUPPORTED_URL', protocol: 'ext:: (a git remote helper)' }),
    );
    // Still accepted: scp-like addresses, bracketed IPv6 included, and a colon later in a path.
    for (const address of [
      'git@host.example:team/x.git',
      'git@[::1]:team/x.git',
      '[::1]:x.git',
      'host.example:a::b.git',
    ]) {
      expect(normalizeRemoteUrl(address, { protocols: ['ssh:'] })).toBe(address);
    }
  });

  it.each([
    ['https://host.example/team/..%2fother-org/x.git', 'an encoded /'],
    ['https://host.example/team/..%2Fother-org/x.git', 'an encoded / (upper case)'],
    ['https://host.example/team/..%5cother-org/x.git', 'an encoded \\'],
    ['https://host.example/team/%252e%252e%252fother/x.git', 'double encoding'],
    ['https://host.example/team/%2e%2e/other-org/x.git', 'an encoded .. segment'],
    ['https://host.example/team/.%2E/other-org/x.git', 'a half-encoded .. segment'],
    ['https://host.example/team/../other-org/x.git', 'a plain .. segment'],
    ['https://host.example/team/./x.git', 'a plain . segment'],
    ['https://host.example/team\\..\\other-org/x.git', 'backslashes'],
    ['https://host.example/team/%00/x.git', 'an encoded NUL'],
    ['https://host.example/team/%zz/x.git', 'a malformed escape'],
  ])('refuses %s (%s): the repository a server decodes it to is not the one its text names', (address) => {
    expect(() => normalizeRemoteUrl(address)).toThrow(expect.objectContaining({ code: 'GIT_INVALID_URL' }));
  });

  it('keeps harmless escapes: a repository named with an encoded space or percent sign', () => {
    expect(normalizeRemoteUrl('https://host.example/team/my%20skills.git')).toBe(
      'https://host.example/team/my%20skills.git',
    );
    expect(normalizeRemoteUrl('https://host.example/team/100%25.git')).toBe('https://host.example/team/100%25.git');
  });
});
