import { describe, expect, it } from 'vitest';
import { GitError, normalizeRemoteUrl } from '../src/index.js';
import { maskUrl } from '../src/url.js';

describe('remote URLs', () => {
  it.each([
    ['https://github.com/org/skills.git', 'https://github.com/org/skills.git'],
    ['https://github.com/org/skills', 'https://github.com/org/skills'],
    ['https://github.com/org/skills.git/', 'https://github.com/org/skills.git'],
    ['HTTPS://GitHub.com/org/skills', 'https://github.com/org/skills'],
    ['https://git.example.com:8443/a/b/c.git', 'https://git.example.com:8443/a/b/c.git'],
    ['http://127.0.0.1:9418/skills.git', 'http://127.0.0.1:9418/skills.git'],
    ['http://127.1.2.3/skills.git', 'http://127.1.2.3/skills.git'],
    ['http://localhost:8080/skills.git', 'http://localhost:8080/skills.git'],
    ['http://[::1]:8080/skills.git', 'http://[::1]:8080/skills.git'],
  ])('accepts %s as %s', (raw, normalized) => {
    expect(normalizeRemoteUrl(raw)).toBe(normalized);
  });

  it('accepts plain http to other hosts only with allowInsecureHttp', () => {
    expect(() => normalizeRemoteUrl('http://git.example.com/a.git')).toThrow(
      expect.objectContaining({ code: 'GIT_INSECURE_URL' }),
    );
    expect(normalizeRemoteUrl('http://git.example.com/a.git', { allowInsecureHttp: true })).toBe(
      'http://git.example.com/a.git',
    );
  });

  it.each([
    ['', 'GIT_INVALID_URL'],
    ['github.com/org/skills', 'GIT_INVALID_URL'],
    ['/srv/git/skills.git', 'GIT_INVALID_URL'],
    ['https://github.com', 'GIT_INVALID_URL'],
    ['https://github.com/', 'GIT_INVALID_URL'],
    ['https://github.com/org/skills?ref=main', 'GIT_INVALID_URL'],
    ['https://github.com/org/skills#main', 'GIT_INVALID_URL'],
    ['https://github.com/org/skills .git', 'GIT_INVALID_URL'],
    ['https://github.com/org/skills\n.git', 'GIT_INVALID_URL'],
    ['https://exa mple.com/a', 'GIT_INVALID_URL'],
    ['https://[not-an-ip/a', 'GIT_INVALID_URL'],
    ['ssh://git@github.com/org/skills.git', 'GIT_UNSUPPORTED_URL'],
    ['git@github.com:org/skills.git', 'GIT_UNSUPPORTED_URL'],
    ['git://github.com/org/skills.git', 'GIT_UNSUPPORTED_URL'],
    ['file:///srv/git/skills.git', 'GIT_UNSUPPORTED_URL'],
    ['ftp://example.com/skills.git', 'GIT_UNSUPPORTED_URL'],
    ['http://example.com/skills.git', 'GIT_INSECURE_URL'],
    ['http://10.0.0.1/skills.git', 'GIT_INSECURE_URL'],
    ['https://user:pass@github.com/org/skills.git', 'GIT_URL_HAS_CREDENTIALS'],
    ['https://token@github.com/org/skills.git', 'GIT_URL_HAS_CREDENTIALS'],
    ['https://@github.com/org/skills.git', 'GIT_URL_HAS_CREDENTIALS'],
    ['http://user:pass@127.0.0.1/skills.git', 'GIT_URL_HAS_CREDENTIALS'],
  ])('refuses %j with %s', (raw, code) => {
    expect(() => normalizeRemoteUrl(raw)).toThrow(expect.objectContaining({ code }));
  });

  it.each([
    'https://alice:S3CRET-PASSWORD@github.com/org/skills.git',
    'https://S3CRET-PASSWORD@github.com/org/skills.git',
    'https://alice:S3CRET-PASSWORD@github.com/org/skills.git?x=1',
    'https://alice:S3CRET/PASSWORD@github.com/org/skills.git', // unencoded / in the password: does not parse
    'https://alice:S3CRET-PASSWORD@exa mple.com/a',
    'ssh://alice:S3CRET-PASSWORD@github.com/org/skills.git',
    'https://github.com/org/skills.git?access_token=S3CRET-PASSWORD',
    'alice:S3CRET-PASSWORD@github.com/org/skills.git',
  ])('never echoes the secret of %s', (raw) => {
    let caught: unknown;
    try {
      normalizeRemoteUrl(raw);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GitError);
    const error = caught as GitError;
    for (const text of [error.message, String(error), JSON.stringify(error), error.stack ?? '']) {
      expect(text).not.toContain('S3CRET');
      expect(text).not.toContain('PASSWORD');
    }
  });

  it('masks userinfo and drops query and fragment when showing a URL', () => {
    expect(maskUrl('https://u:p@host/a.git?token=x#y')).toBe('https://***@host/a.git');
    expect(maskUrl('https://host/org/@scope/a.git')).toBe('https://host/org/@scope/a.git');
  });
});
