import { PathError, type PathKind, type PathRefusal } from './errors.js';
import { PATH_LIMITS } from './limits.js';

export interface NormalizeOptions {
  /**
   * Accept a path that names the root itself (`.`, `./`, `.//.`), returned as `path: ''`.
   * Off by default; on for the fields where the root is meaningful (see `fieldRules`).
   */
  allowRoot?: boolean;
  /** The path must name a file: a trailing `/` (or `/.`) and the root are refused. */
  file?: boolean;
  /** The manifest field the path came from (`'inline.path'`), shown in errors. */
  field?: string;
}

/** A path that passed every rule of its kind, in canonical form. */
export interface NormalizedPath {
  readonly kind: PathKind;
  /**
   * Canonical form: NFC, `/`-separated, no empty, `.` or `..` segments, no leading or
   * trailing `/`. `''` is the root (only when `allowRoot`).
   */
  readonly path: string;
  readonly isRoot: boolean;
  /**
   * The input ended in `/` (or `/.`, which POSIX also reads as a folder). For `local.path`
   * this forces directory semantics; it is dropped from `path`, so keep it from here.
   */
  readonly trailingSlash: boolean;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// C0 controls, DEL, C1 controls, and the bidirectional overrides/isolates: the last group
// is not "control" to Unicode, but lets a name display as something else in a trust UI.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// `c:foo` is relative to the current folder of drive C on Windows; `C:\x` and `C:/x` are absolute.
const DRIVE_LETTER = /^[A-Za-z]:/;
// We never percent-decode, but a path may end up in a URL (the GitHub API) or reach a tool
// that decodes it: an encoded `.`, `/` or `\` is then a traversal we did not see.
const PERCENT_ENCODED = /%(?:2e|2f|5c)/i;

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * The one normaliser behind every path kind. Checks run on the raw input first (so the
 * reason names what the author wrote), then on the NFC form. It is a single pass over the
 * segments with early exits: a hostile input costs at most O(maxBytes).
 */
export function normalizePath(kind: PathKind, input: unknown, options: NormalizeOptions = {}): NormalizedPath {
  if (typeof input !== 'string') throw new PathError(kind, 'not-a-string', typeof input, options.field);
  const refusal = check(input);
  if (typeof refusal === 'string') throw new PathError(kind, refusal, input, options.field);
  const { segments, trailingSlash } = refusal;
  if (segments.length === 0) {
    if (options.file || !options.allowRoot) throw new PathError(kind, 'dot', input, options.field);
    return { kind, path: '', isRoot: true, trailingSlash: true };
  }
  if (options.file && trailingSlash) throw new PathError(kind, 'trailing-slash', input, options.field);
  return { kind, path: segments.join('/'), isRoot: false, trailingSlash };
}

/** The rules every kind shares: the first one broken, or the segments of the canonical form. */
function check(input: string): PathRefusal | { segments: string[]; trailingSlash: boolean } {
  if (input.length === 0) return 'empty';
  // A string has at least as many UTF-8 bytes as UTF-16 units: this cut is safe, and O(1).
  if (input.length > PATH_LIMITS.maxBytes) return 'too-long';
  // Printable ASCII (nearly every real path) has no controls, no surrogates, nothing for NFC
  // to change, and one byte per character: the checks below that only matter beyond it are
  // skipped for it.
  const ascii = PRINTABLE_ASCII.test(input);
  if (!ascii) {
    if (input.includes('\0')) return 'nul';
    if (CONTROL.test(input)) return 'control';
    if (LONE_SURROGATE.test(input)) return 'invalid-unicode';
  }
  if (input.startsWith('\\\\')) return 'unc';
  if (DRIVE_LETTER.test(input)) return 'drive-letter';
  if (input.includes('\\')) return 'backslash';
  if (input.startsWith('/')) return 'absolute';
  if (PERCENT_ENCODED.test(input)) return 'percent-encoded';

  // NFC, so that the NFD spelling macOS produces and the NFC spelling most editors produce
  // are one path: one overlay key, one tar entry.
  const nfc = ascii ? input : input.normalize('NFC');
  if ((ascii ? nfc.length : utf8Bytes(nfc)) > PATH_LIMITS.maxBytes) return 'too-long';

  const segments: string[] = [];
  let last = '';
  // Segments cut by index, not the array `split` gives: that array is of another kind for a
  // string `split` has seen before (a copy from V8's cache of results), and a loop compiled
  // for one kind was thrown away at the first array of the other.
  for (let start = 0; start <= nfc.length; ) {
    let end = nfc.indexOf('/', start);
    if (end === -1) end = nfc.length;
    const segment = nfc.slice(start, end);
    start = end + 1;
    last = segment;
    if (segment === '' || segment === '.') continue;
    // Refused anywhere, even where it would cancel out (`a/../b`): resolving `..` by text is
    // wrong as soon as `a` is a symbolic link, and AIP-26 forbids `..` segments outright.
    if (segment === '..') return 'parent';
    if ((ascii ? segment.length : utf8Bytes(segment)) > PATH_LIMITS.maxSegmentBytes) return 'segment-too-long';
    // `./C:/x` is `C:/x` once its `.` is gone: the canonical form must not start with a drive either.
    if (segments.length === 0 && DRIVE_LETTER.test(segment)) return 'drive-letter';
    segments.push(segment);
    if (segments.length > PATH_LIMITS.maxDepth) return 'too-deep';
  }
  return { segments, trailingSlash: last === '' || last === '.' };
}

/**
 * A workspace-relative path: the `code` string shorthand, `local.path`, `ref.path`.
 * The root is refused unless `allowRoot`.
 */
export function normalizeWorkspacePath(input: string, options: NormalizeOptions = {}): NormalizedPath {
  return normalizePath('workspace', input, options);
}

/**
 * A bundle-internal path: `inline.path`, `local.as`, `github.as`, the `run` file.
 * The root is refused unless `allowRoot` (a folder target: `as: ./`).
 */
export function normalizeBundlePath(input: string, options: NormalizeOptions = {}): NormalizedPath {
  return normalizePath('bundle', input, options);
}

/**
 * A path inside a remote repository: `github.path`. The root (`.`, `./`) is accepted by
 * default, since AIP-26 makes the repository root `github.path`'s default anyway.
 */
export function normalizeRemotePath(input: string, options: NormalizeOptions = {}): NormalizedPath {
  return normalizePath('remote', input, { allowRoot: true, ...options });
}
