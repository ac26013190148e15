import { PATH_LIMITS } from './limits.js';

/**
 * The path kinds of AIP-26 ("Path semantics"): where a path points decides what it may
 * contain. Each kind has its own normaliser, and every refusal names the kind.
 */
export type PathKind = 'workspace' | 'bundle' | 'remote';

/** Why a path was refused. Stable: callers and tests branch on it. */
export type PathRefusal =
  | 'not-a-string'
  | 'empty'
  | 'dot'
  | 'absolute'
  | 'unc'
  | 'drive-letter'
  | 'backslash'
  | 'nul'
  | 'control'
  | 'invalid-unicode'
  | 'percent-encoded'
  | 'parent'
  | 'segment-too-long'
  | 'too-long'
  | 'too-deep'
  | 'trailing-slash';

const KIND_LABEL: Record<PathKind, string> = {
  workspace: 'workspace-relative path',
  bundle: 'bundle-internal path',
  remote: 'repository path',
};

const REASON_TEXT: Record<PathRefusal, string> = {
  'not-a-string': 'is not a string',
  empty: 'is empty',
  dot: 'names the root ("." or "./"), which is not allowed here',
  absolute: 'is absolute (starts with "/")',
  unc: 'is a Windows UNC path (starts with "\\\\")',
  'drive-letter': 'starts with a Windows drive letter',
  backslash: 'contains a backslash; paths use "/" only',
  nul: 'contains a NUL character',
  control: 'contains a control character',
  'invalid-unicode': 'contains a lone UTF-16 surrogate (not valid Unicode)',
  'percent-encoded': 'contains a percent-encoded ".", "/" or "\\" (%2e, %2f, %5c)',
  parent: 'contains a ".." segment',
  'segment-too-long': `has a name longer than ${PATH_LIMITS.maxSegmentBytes} bytes`,
  'too-long': `is longer than ${PATH_LIMITS.maxBytes} bytes`,
  'too-deep': `has more than ${PATH_LIMITS.maxDepth} segments`,
  'trailing-slash': 'ends with "/" but must name a file',
};

/** Long inputs are cut in messages: the full value stays in `input`. */
const MESSAGE_INPUT_CHARS = 120;

function quote(input: string): string {
  const shown = input.length > MESSAGE_INPUT_CHARS ? `${input.slice(0, MESSAGE_INPUT_CHARS)}…` : input;
  // JSON escaping makes NUL, control characters and backslashes visible in logs.
  const quoted = JSON.stringify(shown);
  return input.length > MESSAGE_INPUT_CHARS ? `${quoted} (${input.length} characters)` : quoted;
}

/**
 * A manifest path that AIP-26 forbids. `input` is the path as written, `kind` where it would
 * have pointed, `reason` the first rule it broke, `field` the manifest field when known.
 */
export class PathError extends Error {
  readonly code = 'AIP26_UNSAFE_PATH';
  readonly kind: PathKind;
  readonly reason: PathRefusal;
  readonly input: string;
  readonly field: string | undefined;
  constructor(kind: PathKind, reason: PathRefusal, input: string, field?: string) {
    const where = field === undefined ? '' : ` (${field})`;
    super(`unsafe ${KIND_LABEL[kind]} ${quote(input)}${where}: ${REASON_TEXT[reason]}`);
    this.name = 'PathError';
    this.kind = kind;
    this.reason = reason;
    this.input = input;
    this.field = field;
  }
}

export type PathCollisionKind = 'case' | 'file-directory';

/**
 * Two bundle paths that cannot both exist once the bundle is unpacked: they differ only by
 * letter case (one file on a case-insensitive file system: macOS, Windows), or one is a file
 * and the other needs it to be a folder.
 */
export class PathCollisionError extends Error {
  readonly code = 'AIP26_PATH_COLLISION';
  readonly kind: PathCollisionKind;
  readonly first: string;
  readonly second: string;
  constructor(kind: PathCollisionKind, first: string, second: string) {
    super(
      kind === 'case'
        ? `bundle paths ${JSON.stringify(first)} and ${JSON.stringify(second)} differ only by letter case: they are one file on macOS and Windows`
        : `bundle path ${JSON.stringify(first)} is a file, but ${JSON.stringify(second)} needs it to be a folder`,
    );
    this.name = 'PathCollisionError';
    this.kind = kind;
    this.first = first;
    this.second = second;
  }
}
