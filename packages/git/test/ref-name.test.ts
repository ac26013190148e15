import { describe, expect, it } from 'vitest';
import { refNameProblem } from '../src/index.js';
import { assertRefName } from '../src/ref-name.js';

describe('ref names (git-check-ref-format, plus our stricter rules)', () => {
  it.each([
    'main',
    'feature/x',
    'v1.2.3',
    'refs/heads/main',
    'refs/tags/v1',
    'release-2024',
    'a@b',
    'dots.in.middle',
    'ümlaut',
    'HEAD',
  ])('accepts %j', (name) => {
    expect(refNameProblem(name)).toBeUndefined();
    expect(() => assertRefName(name)).not.toThrow();
  });

  it.each([
    ['', 'is empty'],
    ['@', 'is the single character @'],
    ['a\u0000b', 'contains a control character or NUL'],
    ['a\nb', 'contains a control character or NUL'],
    ['a\tb', 'contains a control character or NUL'],
    ['a\u007fb', 'contains a control character or NUL'],
    ['a b', 'contains a space'],
    ['a~1', 'contains one of ~ ^ : ? * ['],
    ['a^', 'contains one of ~ ^ : ? * ['],
    ['a:b', 'contains one of ~ ^ : ? * ['],
    ['a?', 'contains one of ~ ^ : ? * ['],
    ['a*', 'contains one of ~ ^ : ? * ['],
    ['a[b', 'contains one of ~ ^ : ? * ['],
    ['a\\b', 'contains a backslash'],
    ['a..b', 'contains ..'],
    ['../../etc/passwd', 'contains ..'],
    ['main@{1}', 'contains @{'],
    ['/main', 'begins with /'],
    ['main/', 'ends with /'],
    ['a//b', 'contains //'],
    ['main.', 'ends with .'],
    ['.hidden', 'has a component that begins with .'],
    ['a/.b', 'has a component that begins with .'],
    ['main.lock', 'has a component that ends with .lock'],
    ['a.lock/b', 'has a component that ends with .lock'],
    ['-main', 'begins with -'],
    ['--upload-pack=evil', 'begins with -'],
    ['a%2e%2eb', 'contains % (escapes are not decoded)'],
    ['x'.repeat(1025), 'is longer than 1024 characters'],
  ])('refuses %j: %s', (name, reason) => {
    expect(refNameProblem(name)).toBe(reason);
    expect(() => assertRefName(name)).toThrow(expect.objectContaining({ code: 'GIT_INVALID_REF_NAME', reason }));
  });

  it("applies only git's own rules to names a server lists", () => {
    expect(refNameProblem('refs/heads/100%', { strict: false })).toBeUndefined();
    expect(refNameProblem('refs/heads/a..b', { strict: false })).toBe('contains ..');
  });
});
