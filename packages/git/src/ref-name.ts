import { GitInvalidRefNameError } from './errors.js';

/**
 * The rules of `git check-ref-format` (with `--allow-onelevel`, since short names like
 * `main` are accepted), then a few of our own. Each rule is a row so the README and the
 * tests can list them one by one. A name is checked before any lookup, so a malformed
 * name never reaches a server or a command line.
 */
const GIT_RULES: ReadonlyArray<readonly [reason: string, breaks: (name: string) => boolean]> = [
  ['is empty', (name) => name === ''],
  ['is the single character @', (name) => name === '@'],
  ['contains a control character or NUL', (name) => /[\u0000-\u001f\u007f]/.test(name)],
  ['contains a space', (name) => name.includes(' ')],
  ['contains one of ~ ^ : ? * [', (name) => /[~^:?*[]/.test(name)],
  ['contains a backslash', (name) => name.includes('\\')],
  ['contains ..', (name) => name.includes('..')],
  ['contains @{', (name) => name.includes('@{')],
  ['begins with /', (name) => name.startsWith('/')],
  ['ends with /', (name) => name.endsWith('/')],
  ['contains //', (name) => name.includes('//')],
  ['ends with .', (name) => name.endsWith('.')],
  ['has a component that begins with .', (name) => name.split('/').some((part) => part.startsWith('.'))],
  ['has a component that ends with .lock', (name) => name.split('/').some((part) => part.endsWith('.lock'))],
];

const STRICTER_RULES: ReadonlyArray<readonly [reason: string, breaks: (name: string) => boolean]> = [
  // git refuses it for branch names; a leading dash would also read as an option to a command.
  ['begins with -', (name) => name.startsWith('-')],
  // Names travel through URLs and manifests; `%2e%2e` must not become `..` somewhere downstream.
  ['contains % (escapes are not decoded)', (name) => name.includes('%')],
  ['is longer than 1024 characters', (name) => name.length > 1024],
];

/**
 * Why `name` is not an acceptable ref name, or undefined if it is. `strict` (the default)
 * adds our rules to git's: they apply to names callers give us, not to names servers list.
 */
export function refNameProblem(name: string, { strict = true }: { strict?: boolean } = {}): string | undefined {
  if (typeof name !== 'string') return 'is not a string';
  for (const [reason, breaks] of GIT_RULES) if (breaks(name)) return reason;
  if (strict) for (const [reason, breaks] of STRICTER_RULES) if (breaks(name)) return reason;
  return undefined;
}

/** Throws GitInvalidRefNameError unless `name` passes refNameProblem. */
export function assertRefName(name: string): void {
  const problem = refNameProblem(name);
  // A name that is not a string is named by its type: String() of a hostile object (a list
  // holding `{ toString: null }`) throws a TypeError of its own instead of this error.
  if (problem !== undefined)
    throw new GitInvalidRefNameError(
      typeof name === 'string' ? name : `(${name === null ? 'null' : Array.isArray(name) ? 'array' : typeof name})`,
      problem,
    );
}
