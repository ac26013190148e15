/**
 * What a file in a fixture tree can be:
 * - a string (UTF-8) or bytes: a regular file, mode 100644;
 * - `{ content, mode }` or `{ content, executable: true }`: mode 100755 when any execute
 *   bit of `mode` is set (git stores only 100644 and 100755), 100644 otherwise;
 * - `{ symlink: target }`: a symbolic link (mode 120000); the target is stored verbatim,
 *   so it may point anywhere, including outside the repository (`../../../etc/passwd`).
 */
export type FileContent =
  | string
  | Uint8Array
  | { content: string | Uint8Array; mode?: number; executable?: boolean }
  | { symlink: string };

/** Files by path relative to the repository root, `/`-separated: `skills/a/SKILL.md`. */
export type FileTree = Record<string, FileContent>;

export type FileEntry =
  | { kind: 'file'; content: Uint8Array; executable: boolean }
  | { kind: 'symlink'; target: string };

export function fileEntry(value: FileContent): FileEntry {
  if (typeof value === 'string') return { kind: 'file', content: Buffer.from(value, 'utf8'), executable: false };
  if (value instanceof Uint8Array) return { kind: 'file', content: value, executable: false };
  if ('symlink' in value) return { kind: 'symlink', target: value.symlink };
  const content = typeof value.content === 'string' ? Buffer.from(value.content, 'utf8') : value.content;
  const executable = value.executable ?? ((value.mode ?? 0o644) & 0o111) !== 0;
  return { kind: 'file', content, executable };
}

/**
 * Rejects paths git would refuse or that would mean something else than written: absolute,
 * empty segments, `.`/`..`, a `.git` folder, NUL. Symlink targets are not checked: fixtures
 * need links that escape on purpose.
 */
export function assertRepoPath(path: string): void {
  const segments = path.split('/');
  const bad =
    path === '' ||
    path.includes('\0') ||
    segments.some(
      (segment) => segment === '' || segment === '.' || segment === '..' || segment.toLowerCase() === '.git',
    );
  if (bad) throw new Error(`invalid path in repository spec: ${JSON.stringify(path)}`);
}
