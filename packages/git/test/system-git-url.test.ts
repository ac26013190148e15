import { describe, expect, it } from 'vitest';
import { GitError, isomorphicGitEngine, listRefs, normalizeRemoteUrl, systemGitEngine } from '../src/index.js';
import { maskUrl } from '../src/url.js';

const SSH = { protocols: ['https:', 'http:', 'ssh:'], engine: 'system-git' };

describe('ssh addresses', () => {
  it.each([
    ['ssh://git@github.com/org/skills.git', 'ssh://git@github.com/org/skills.git'],
    ['ssh://git@GitHub.com/org/skills.git/', 'ssh://git@github.com/org/skills.git'],
    ['ssh://github.com/org/skills.git', 'ssh://github.com/org/skills.git'],
    ['ssh://root@127.0.0.1:2222/skills.git', 'ssh://root@127.0.0.1:2222/skills.git'],
    ['ssh://git@[::1]:2222/skills.git', 'ssh://git@[::1]:2222/skills.git'],
    ['SSH://git@host/~user/repo.git', 'ssh://git@host/~user/repo.git'],
  ])('accepts %s as %s for an engine that speaks ssh', (raw, normalized) => {
    expect(normalizeRemoteUrl(raw, SSH)).toBe(normalized);
  });

  it.each([
    'git@github.com:org/skills.git',
    'github.com:org/skills.git',
    'git@host:/srv/git/skills.git',
    'deploy.key-1@git.example.com:a/b',
  ])('accepts the scp-like %s unchanged for an engine that speaks ssh', (raw) => {
    expect(normalizeRemoteUrl(raw, SSH)).toBe(raw);
  });

  it.each(['git@github.com:org/skills.git', 'ssh://git@github.com/org/skills.git'])(
    'refuses %s for an https-only engine (GIT_UNSUPPORTED_URL)',
    (raw) => {
      expect(() => normalizeRemoteUrl(raw)).toThrow(expect.objectContaining({ code: 'GIT_UNSUPPORTED_URL' }));
      expect(() => normalizeRemoteUrl(raw, { protocols: isomorphicGitEngine().protocols })).toThrow(
        expect.objectContaining({ code: 'GIT_UNSUPPORTED_URL' }),
      );
    },
  );

  it('the system engine takes ssh addresses, the default engine refuses them before anything runs', async () => {
    expect(systemGitEngine().protocols).toEqual(['https:', 'http:', 'ssh:']);
    await expect(listRefs('git@example.invalid:org/r.git')).rejects.toMatchObject({
      code: 'GIT_UNSUPPORTED_URL',
      engine: 'isomorphic-git',
    });
  });

  it.each([
    ['ssh://git:S3CRET-PASSWORD@github.com/org/r.git', 'GIT_URL_HAS_CREDENTIALS'],
    ['ssh://git:@github.com/org/r.git', 'GIT_URL_HAS_CREDENTIALS'],
    ['alice:S3CRET-PASSWORD@github.com/org/skills.git', 'GIT_INVALID_URL'],
    ['alice:S3CRET-PASSWORD@github.com:org/skills.git', 'GIT_INVALID_URL'],
    ['ssh://-oProxyCommand=touch${IFS}x/r.git', 'GIT_INVALID_URL'],
    ['ssh://git@-oProxyCommand=x/r.git', 'GIT_INVALID_URL'],
    ['ssh://-oProxyCommand=x@host/r.git', 'GIT_INVALID_URL'],
    ['-oProxyCommand=x@host:r.git', 'GIT_INVALID_URL'],
    ['git@-oProxyCommand=x:r.git', 'GIT_INVALID_URL'],
    ['ssh://git@host', 'GIT_INVALID_URL'],
    ['ssh://git@host/', 'GIT_INVALID_URL'],
    ['git@host:', 'GIT_INVALID_URL'],
    ['git@:org/r.git', 'GIT_INVALID_URL'],
    ['ssh://@host/r.git', 'GIT_INVALID_URL'],
    ['ssh://git@host/r.git?x=1', 'GIT_INVALID_URL'],
    ['ssh://git@host/a/../r.git', 'GIT_INVALID_URL'],
    ["ssh://git@host/it's.git", 'GIT_INVALID_URL'],
    ['git@host:org/r.git#main', 'GIT_INVALID_URL'],
    ['git@host:org/r git', 'GIT_INVALID_URL'],
    ['ssh://git@host:22x/r.git', 'GIT_INVALID_URL'],
  ])('refuses %j (%s)', (raw, code) => {
    expect(() => normalizeRemoteUrl(raw, SSH)).toThrow(expect.objectContaining({ code }));
  });

  it.each([
    'ssh://git:S3CRET-PASSWORD@github.com/org/r.git',
    'alice:S3CRET-PASSWORD@github.com/org/skills.git',
    'alice:S3CRET-PASSWORD@github.com:org/skills.git',
  ])('never echoes the secret of %s', (raw) => {
    let caught: unknown;
    try {
      normalizeRemoteUrl(raw, SSH);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GitError);
    const error = caught as GitError;
    for (const text of [error.message, String(error), JSON.stringify(error), error.stack ?? ''])
      expect(text).not.toContain('S3CRET');
  });

  it('masks the user of ssh addresses in messages', () => {
    expect(maskUrl('ssh://git@github.com/org/r.git')).toBe('ssh://***@github.com/org/r.git');
    expect(maskUrl('git@github.com:org/r.git')).toBe('***@github.com:org/r.git');
  });

  it('keeps the https rules for engines that speak ssh too', () => {
    expect(normalizeRemoteUrl('HTTPS://GitHub.com/org/skills/', SSH)).toBe('https://github.com/org/skills');
    expect(() => normalizeRemoteUrl('https://token@github.com/org/r.git', SSH)).toThrow(
      expect.objectContaining({ code: 'GIT_URL_HAS_CREDENTIALS' }),
    );
    expect(() => normalizeRemoteUrl('http://example.com/r.git', SSH)).toThrow(
      expect.objectContaining({ code: 'GIT_INSECURE_URL' }),
    );
    expect(() => normalizeRemoteUrl('file:///srv/r.git', SSH)).toThrow(
      expect.objectContaining({ code: 'GIT_UNSUPPORTED_URL' }),
    );
    expect(() => normalizeRemoteUrl('git://host/r.git', SSH)).toThrow(
      expect.objectContaining({ code: 'GIT_UNSUPPORTED_URL' }),
    );
  });
});
