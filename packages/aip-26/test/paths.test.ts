import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FIELD_RULES,
  PATH_LIMITS,
  PathCollisionError,
  PathError,
  type PathRefusal,
  assertNoPathCollisions,
  findFileDirectoryConflicts,
  findPathTwins,
  isInside,
  normalizeBundlePath,
  normalizeManifestPath,
  normalizeRemotePath,
  normalizeWorkspacePath,
  pathKey,
} from '../src/paths/index.js';

function refusal(run: () => unknown): PathError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(PathError);
    return error as PathError;
  }
  throw new Error('expected a PathError, got none');
}

// [input, reason, why] — every kind shares these rules; the table runs them as bundle paths
// (and spot-checks the other kinds below).
const UNSAFE: [string, PathRefusal, string][] = [
  ['', 'empty', 'nothing'],
  ['.', 'dot', 'the root, as a file'],
  ['./', 'dot', 'the root with a slash'],
  ['.//.', 'dot', 'the root, spelled long'],
  ['/x', 'absolute', 'absolute'],
  ['/', 'absolute', 'the file-system root'],
  ['////etc', 'absolute', 'several leading slashes'],
  ['/etc/passwd', 'absolute', 'a system file'],
  ['C:\\x', 'drive-letter', 'a Windows absolute path'],
  ['c:foo', 'drive-letter', 'relative to drive C'],
  ['C:/Windows', 'drive-letter', 'a drive with forward slashes'],
  ['./C:/x', 'drive-letter', 'a drive once its leading ./ is gone'],
  ['.//c:', 'drive-letter', 'a drive after empty and . segments'],
  ['./C:', 'drive-letter', 'a bare drive after ./'],
  ['\\\\srv\\share', 'unc', 'a UNC share'],
  ['\\\\?\\C:\\x', 'unc', 'a Win32 device path'],
  ['..\\..\\x', 'backslash', 'traversal with backslashes'],
  ['a\\b', 'backslash', 'a backslash inside'],
  ['\\x', 'backslash', 'a leading backslash'],
  ['a\0b', 'nul', 'a NUL inside'],
  ['\0', 'nul', 'only a NUL'],
  ['tool.ts\0.png', 'nul', 'a NUL truncating the extension'],
  ['a\nb', 'control', 'a newline'],
  ['a\tb', 'control', 'a tab'],
  ['a\rb', 'control', 'a carriage return'],
  ['a\u007fb', 'control', 'DEL'],
  ['a\u0085b', 'control', 'a C1 control (NEL)'],
  ['gpj.\u202eexe', 'control', 'a right-to-left override'],
  ['a\ud800b', 'invalid-unicode', 'a lone high surrogate'],
  ['a\udc00', 'invalid-unicode', 'a lone low surrogate'],
  ['..', 'parent', 'the parent'],
  ['../', 'parent', 'the parent, as a folder'],
  ['../x', 'parent', 'a parent step first'],
  ['a/../../x', 'parent', 'escaping after a step down'],
  ['a/../b', 'parent', 'a step that cancels out (refused anyway)'],
  ['a/..', 'parent', 'a parent step last'],
  ['./../x', 'parent', 'a parent step behind a dot'],
  ['a/./../../b', 'parent', 'mixed dots'],
  ['%2e%2e/x', 'percent-encoded', 'an encoded parent'],
  ['%2E%2E/x', 'percent-encoded', 'an encoded parent, upper case'],
  ['%2F..', 'percent-encoded', 'an encoded slash'],
  ['a%2f..%2fb', 'percent-encoded', 'encoded slashes around a parent'],
  ['..%5cx', 'percent-encoded', 'an encoded backslash'],
  ['x'.repeat(256), 'segment-too-long', 'a 256-byte name'],
  ['\u00e9'.repeat(128), 'segment-too-long', 'a 128-character name of 256 bytes'],
  ['x'.repeat(4097), 'too-long', 'over 4096 characters'],
  ['ab/'.repeat(1366), 'too-long', 'over 4096 bytes in short names'],
  ['\u20ac'.repeat(200).concat('/').repeat(7), 'too-long', 'under 4096 characters but over 4096 bytes'],
  ['a/'.repeat(10_000), 'too-long', 'a 10,000-deep path'],
  ['a/'.repeat(PATH_LIMITS.maxDepth).concat('a'), 'too-deep', 'one segment over the depth limit'],
];

describe('unsafe paths are refused with a PathError naming the reason', () => {
  it('has at least 30 cases', () => {
    expect(UNSAFE.length).toBeGreaterThanOrEqual(30);
  });

  it.each(UNSAFE)('refuses %j (%s: %s)', (input, reason) => {
    const error = refusal(() => normalizeBundlePath(input));
    expect(error.code).toBe('AIP26_UNSAFE_PATH');
    expect(error.reason).toBe(reason);
    expect(error.kind).toBe('bundle');
    expect(error.input).toBe(input);
  });

  it.each(UNSAFE.filter(([, reason]) => reason !== 'dot'))(
    'refuses %j as a workspace path and as a repository path too',
    (input, reason) => {
      expect(refusal(() => normalizeWorkspacePath(input)).reason).toBe(reason);
      expect(refusal(() => normalizeRemotePath(input)).reason).toBe(reason);
    },
  );

  it('refuses a value that is not a string', () => {
    expect(refusal(() => normalizeBundlePath(42 as unknown as string)).reason).toBe('not-a-string');
  });

  it('refuses a trailing slash where a file is required', () => {
    expect(refusal(() => normalizeBundlePath('tool.ts/', { file: true })).reason).toBe('trailing-slash');
    expect(refusal(() => normalizeBundlePath('lib/.', { file: true })).reason).toBe('trailing-slash');
  });

  it('shows the input JSON-escaped in the message, with the kind and the field', () => {
    const error = refusal(() => normalizeManifestPath('inline.path', 'a\0b'));
    expect(error.message).toBe('unsafe bundle-internal path "a\\u0000b" (inline.path): contains a NUL character');
    expect(error.field).toBe('inline.path');
    expect(refusal(() => normalizeWorkspacePath('..\\x')).message).toContain('"..\\\\x"');
  });

  it('cuts a huge input in the message but keeps all of it in the error', () => {
    const input = 'x'.repeat(1_000_000);
    const error = refusal(() => normalizeBundlePath(input));
    expect(error.message.length).toBeLessThan(300);
    expect(error.message).toContain('1000000 characters');
    expect(error.input).toBe(input);
  });

  it('fails fast on a 10 MB path: no recursion, no full scan', () => {
    const input = 'a/'.repeat(5_000_000);
    expect(refusal(() => normalizeBundlePath(input)).reason).toBe('too-long');
    // The length is checked before anything reads the string: O(1), whatever its size. One
    // pass over 10 MB costs milliseconds, so 200 refusals that each scanned the string would
    // take a second or more; 200 constant-time refusals take microseconds, far inside the
    // bound on a loaded machine.
    const started = performance.now();
    for (let i = 0; i < 200; i += 1) refusal(() => normalizeBundlePath(input));
    expect(performance.now() - started).toBeLessThan(400);
  });
});

describe('safe paths normalise to one canonical form', () => {
  it.each([
    ['tool.ts', 'tool.ts', false],
    ['./tool.ts', 'tool.ts', false],
    ['a//b', 'a/b', false],
    ['a/', 'a', true],
    ['a/.', 'a', true],
    ['a/./b', 'a/b', false],
    ['./a/./b//', 'a/b', true],
    ['src/', 'src', true],
    ['...', '...', false],
    ['..foo/bar', '..foo/bar', false],
    ['foo..', 'foo..', false],
    ['.env', '.env', false],
    ['a b/c d.ts', 'a b/c d.ts', false],
    ['100%.txt', '100%.txt', false],
    ['%41.ts', '%41.ts', false],
    ['~/x', '~/x', false],
    ['ab:c', 'ab:c', false],
    ['e\u0301t\u00e9.ts', '\u00e9t\u00e9.ts', false],
    ['x'.repeat(255), 'x'.repeat(255), false],
    ['a/'.repeat(PATH_LIMITS.maxDepth - 1).concat('a'), 'a/'.repeat(PATH_LIMITS.maxDepth - 1).concat('a'), false],
  ])('%j → %j (trailing slash: %s)', (input, canonical, trailingSlash) => {
    const result = normalizeBundlePath(input);
    expect(result).toEqual({ kind: 'bundle', path: canonical, isRoot: false, trailingSlash });
  });

  it('turns NFD into NFC, so the macOS and the editor spelling are one path', () => {
    expect(normalizeBundlePath('cafe\u0301.ts').path).toBe('caf\u00e9.ts');
    expect(pathKey('cafe\u0301.ts')).toBe(pathKey('caf\u00e9.ts'));
  });

  it('keeps that the input ended with "/", which forces directory semantics for local', () => {
    expect(normalizeWorkspacePath('shared/email-templates/').trailingSlash).toBe(true);
    expect(normalizeWorkspacePath('shared/email-templates').trailingSlash).toBe(false);
  });

  it('accepts the root only where asked, as path ""', () => {
    expect(normalizeBundlePath('./', { allowRoot: true })).toEqual({
      kind: 'bundle',
      path: '',
      isRoot: true,
      trailingSlash: true,
    });
    expect(refusal(() => normalizeBundlePath('.')).reason).toBe('dot');
    expect(refusal(() => normalizeBundlePath('.', { allowRoot: true, file: true })).reason).toBe('dot');
    expect(refusal(() => normalizeBundlePath('', { allowRoot: true })).reason).toBe('empty');
  });

  it('accepts "." and "./" as the repository root for github.path by default', () => {
    expect(normalizeRemotePath('.').isRoot).toBe(true);
    expect(normalizeRemotePath('./').path).toBe('');
    expect(normalizeRemotePath('src/').path).toBe('src');
  });
});

describe('each manifest field has its path kind and root rule', () => {
  it.each([
    ['code', 'workspace', false, false],
    ['ref.path', 'workspace', false, false],
    ['local.path', 'workspace', false, false],
    ['local.as', 'bundle', true, false],
    ['github.path', 'remote', true, false],
    ['github.as', 'bundle', true, false],
    ['inline.path', 'bundle', false, true],
    ['run.file', 'bundle', false, true],
  ] as const)('%s is a %s path (root allowed: %s, must be a file: %s)', (field, kind, allowRoot, file) => {
    expect(FIELD_RULES[field]).toEqual({ kind, allowRoot, file });
    if (allowRoot) expect(normalizeManifestPath(field, './').isRoot).toBe(true);
    else expect(refusal(() => normalizeManifestPath(field, '.')).reason).toBe('dot');
    if (file) expect(refusal(() => normalizeManifestPath(field, 'lib/')).reason).toBe('trailing-slash');
    else expect(normalizeManifestPath(field, 'lib/')).toMatchObject({ path: 'lib', trailingSlash: true });
    const error = refusal(() => normalizeManifestPath(field, '../x'));
    expect([error.kind, error.field, error.reason]).toEqual([kind, field, 'parent']);
  });

  it.each([
    ['code', './code-workspaces/render-utils', 'code-workspaces/render-utils'],
    ['local.path', 'shared/lib/render-mustache.ts', 'shared/lib/render-mustache.ts'],
    ['local.as', 'templates/', 'templates'],
    ['github.path', 'src/', 'src'],
    ['github.as', 'vendor/', 'vendor'],
    ['inline.path', 'config/region.ts', 'config/region.ts'],
    ['run.file', 'reports/quarterly.ts', 'reports/quarterly.ts'],
  ] as const)('accepts the spec example %s: %j', (field, input, canonical) => {
    expect(normalizeManifestPath(field, input).path).toBe(canonical);
  });
});

describe('twins: paths that are one file somewhere', () => {
  it('finds NFC/NFD twins; they share a key, so the later one simply wins', () => {
    const nfc = 'caf\u00e9.ts';
    const nfd = 'cafe\u0301.ts';
    expect(findPathTwins([nfc, 'a.ts', nfd])).toEqual([{ kind: 'normalization', first: nfc, second: nfd }]);
    expect(() => assertNoPathCollisions([nfc, nfd])).not.toThrow();
  });

  it('finds case twins among files', () => {
    expect(findPathTwins(['README.md', 'src/a.ts', 'readme.md'])).toEqual([
      { kind: 'case', first: 'README.md', second: 'readme.md' },
    ]);
  });

  it('finds case twins among folders, once per clash', () => {
    expect(findPathTwins(['Lib/a.ts', 'lib/b.ts', 'lib/c.ts'])).toEqual([
      { kind: 'case', first: 'Lib', second: 'lib' },
    ]);
    expect(findPathTwins(['src/Util.ts', 'src/util.ts'])).toEqual([
      { kind: 'case', first: 'src/Util.ts', second: 'src/util.ts' },
    ]);
  });

  it('folds case per character, beyond ASCII', () => {
    expect(findPathTwins(['\u00c9t\u00e9.md', '\u00e9t\u00e9.md'])).toHaveLength(1);
    expect(findPathTwins(['\u03a3.md', '\u03c3.md'])).toHaveLength(1);
  });

  it('finds nothing in a clean set, and repeats of one path are not twins', () => {
    expect(findPathTwins(['tool.ts', 'lib/a.ts', 'lib/b.ts', 'tool.ts', './tool.ts'])).toEqual([]);
  });

  it('refuses case twins with a PathCollisionError, since macOS and Windows would keep only one', () => {
    let error: unknown;
    try {
      assertNoPathCollisions(['tool.ts', 'Tool.ts']);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PathCollisionError);
    expect(error).toMatchObject({ code: 'AIP26_PATH_COLLISION', kind: 'case', first: 'tool.ts', second: 'Tool.ts' });
  });

  it('refuses a file that another path needs as a folder', () => {
    expect(findFileDirectoryConflicts(['lib', 'lib/x.ts', 'a/b', 'a/b/c/d'])).toEqual([
      { file: 'lib', inside: 'lib/x.ts' },
      { file: 'a/b', inside: 'a/b/c/d' },
    ]);
    expect(() => assertNoPathCollisions(['lib', 'lib/x.ts'])).toThrow(PathCollisionError);
  });

  it('refuses unsafe paths in the set with a PathError', () => {
    expect(() => findPathTwins(['ok.ts', '../x'])).toThrow(PathError);
    expect(() => pathKey('lib/')).toThrow(PathError);
  });

  it('is linear: 50,000 paths (a full bundle) take well under a quadratic scan', () => {
    // Not a benchmark (see bench/): the bound only catches an accidental O(n²), which would
    // take minutes here.
    const paths = Array.from({ length: 50_000 }, (_, i) => `pkg${i % 100}/dir${i % 7}/file${i}.ts`);
    const started = performance.now();
    expect(findPathTwins([...paths, 'PKG0/x.ts'])).toEqual([{ kind: 'case', first: 'pkg0', second: 'PKG0' }]);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('isInside(root, candidate)', () => {
  const root = path.resolve('/srv/bundle');
  it.each([
    [root, true],
    [path.join(root, 'a'), true],
    [path.join(root, 'a', 'b'), true],
    [path.join(root, '..cache'), true],
    [path.join(root, 'a', '..', 'b'), true],
    [path.join(root, '..'), false],
    [path.join(root, '..', 'bundle2'), false],
    [path.resolve('/srv/bundle-other'), false],
    [path.resolve('/etc/passwd'), false],
  ])('%s → %s', (candidate, inside) => {
    expect(isInside(root, candidate)).toBe(inside);
  });
});
