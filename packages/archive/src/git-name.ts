/**
 * Names git itself refuses to put in a work tree, so that nothing we extract, pull, import,
 * build or ship can plant them either.
 *
 * A `.git` folder (or a `.git` gitfile) inside a tree someone else wrote is their repository
 * configuration on our disk: `core.fsmonitor`, `core.sshCommand` or a hook there runs as soon
 * as anyone types `git status` in or above it. Git refuses every spelling that some
 * filesystem it supports folds into `.git`, and so do we, with the same rules as git's
 * `verify_path` (git/read-cache.c, path.c `is_ntfs_dotgit`, utf8.c `is_hfs_dotgit`):
 *
 * - case: `.GIT`, `.Git` (NTFS and HFS+ fold case);
 * - NTFS: trailing dots and spaces are dropped (`.git.`, `.git `, `.git. .`), an alternate data
 *   stream names the file itself (`.git::$INDEX_ALLOCATION`, `.git:x`), and the 8.3 short
 *   name `git~1` is the same folder;
 * - HFS+: the code points HFS+ ignores may sit anywhere in the name (`.g\u200cit`), see HFS_IGNORED.
 *
 * A backslash is a folder separator on Windows, so each part of a segment between
 * backslashes is judged too (`a\.git` is `.git` there), as git does.
 *
 * Separately, `.gitmodules` may not be a symbolic link (git refuses to check one out: it
 * would read the submodule configuration from wherever the link points), in the same
 * NTFS and HFS+ spellings, including its short names `gitmod~1`..`gitmod~4` and the hashed
 * fallback `gi7eba~N`.
 */

/** Why a path is refused: a `.git` segment, or a `.gitmodules` that is a symbolic link. */
export type GitPathProblem = 'git-dir' | 'gitmodules-link';

/**
 * The code points HFS+ ignores when it compares names (git's utf8.c `next_hfs_char`):
 * zero-width joiners and marks, directional embeddings and overrides, the deprecated
 * formatting characters, and the zero-width no-break space.
 */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** What NTFS drops at the end of a name, then an optional alternate data stream suffix. */
const NTFS_TAIL = '[. ]*(?::.*)?';

/** NTFS: `.git` or its short name, then only dots and spaces, or a stream suffix. */
const NTFS_DOT_GIT = new RegExp(`^(?:\\.git|git~1)${NTFS_TAIL}$`, 's');
const NTFS_DOT_GITMODULES = new RegExp(`^(?:\\.gitmodules|gitmod~[1-4])${NTFS_TAIL}$`, 's');
const ONLY_NTFS_TAIL = new RegExp(`^${NTFS_TAIL}$`, 's');

/**
 * `.gitmodules`, its 8.3 short names (`gitmod~1`..`gitmod~4`), and the fallback short name:
 * up to six characters of `gi7eba`, a tilde, a digit 1-9, and digits up to eight characters
 * in all (git's `is_ntfs_dot_generic`).
 */
function isNtfsDotGitmodules(part: string): boolean {
  if (NTFS_DOT_GITMODULES.test(part)) return true;
  const shortName = /^([a-z0-9]{0,6})~[1-9][0-9]*/.exec(part);
  if (shortName === null) return false;
  const [head, prefix] = shortName as unknown as [string, string];
  if (head.length !== 8 || !'gi7eba'.startsWith(prefix)) return false;
  return ONLY_NTFS_TAIL.test(part.slice(8));
}

/** ASCII letters in lower case: both filesystems fold case, and the names we look for are ASCII. */
function lower(part: string): string {
  return part.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** A name as HFS+ compares it: its ignorable code points gone (no other folding applies to these ASCII names). */
function hfsFolded(part: string): string {
  return lower(part.replace(HFS_IGNORED, ''));
}

/** The parts of one path segment that Windows treats as separate names. */
function parts(segment: string): string[] {
  return segment.split('\\');
}

/**
 * What every spelling of `.git` holds: `git` in some case, or a code point HFS+ ignores
 * (which may sit inside it). A name with neither is not `.git` on any filesystem, which
 * answers most names with one scan (a tree's every entry is judged).
 */
const MAYBE_DOT_GIT = /[gG][iI][tT]|[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/;

/** True when `segment`, a single file or folder name, is `.git` in any spelling git refuses. */
export function isDotGit(segment: string): boolean {
  if (!MAYBE_DOT_GIT.test(segment)) return false;
  // The two filesystems fold apart, as git judges them (is_hfs_dotgit, is_ntfs_dotgit): HFS+
  // drops ignorable code points but keeps trailing dots; NTFS drops trailing dots and spaces
  // but keeps every other code point.
  return hfsFolded(segment) === '.git' || parts(segment).some((part) => NTFS_DOT_GIT.test(lower(part)));
}

/** True when `segment` is `.gitmodules` in any spelling git refuses as a symbolic link. */
export function isDotGitmodules(segment: string): boolean {
  return hfsFolded(segment) === '.gitmodules' || parts(segment).some((part) => isNtfsDotGitmodules(lower(part)));
}

/**
 * Why git would refuse to write `path` (relative, `/`-separated), or undefined. `link` says
 * the entry at `path` itself is a symbolic link. This is the one predicate every reader,
 * extractor and writer of trees from outside applies.
 */
export function gitPathProblem(path: string, options: { link?: boolean } = {}): GitPathProblem | undefined {
  const segments = path.split('/');
  if (segments.some(isDotGit)) return 'git-dir';
  if (options.link === true && isDotGitmodules(segments[segments.length - 1] ?? '')) return 'gitmodules-link';
  return undefined;
}
