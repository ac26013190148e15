import { posix } from 'node:path';
import { normalizeManifestPath } from '../paths/index.js';
import { RunResolutionError } from './errors.js';
import { DEFAULT_RUNNERS, type RunnerTable, runnerFor } from './runners.js';
import { hasShellOperator, splitWords } from './shell.js';

/** The `run` block as a manifest writes it (AIP-26 "run — three forms" + the explicit form). */
export type RunValue =
  | string
  | readonly string[]
  | { readonly file: string }
  | { readonly exec: readonly string[] }
  | { readonly shell: string };

/** A `run` block understood, before any bundle root is known. */
export type ParsedRun =
  /** `file` is bundle-internal and canonical; `args` follow it (string form `tool.py --fast`). */
  | { readonly form: 'file'; readonly file: string; readonly args: readonly string[] }
  | { readonly form: 'exec'; readonly argv: readonly [string, ...string[]] }
  | { readonly form: 'shell'; readonly command: string };

export interface RunOptions {
  /**
   * Runner per extension; replaces the default table (spread `DEFAULT_RUNNERS` to extend it).
   * Default `DEFAULT_RUNNERS` (`.ts` → `npx --yes tsx`, `.js` → `node`, `.py` → `python`, `.sh` → `bash`).
   */
  runners?: RunnerTable;
}

const DISCRIMINATORS = ['file', 'exec', 'shell'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Reads a `run` block (see `resolveRun` for the rules). Throws `RunResolutionError` for a
 * block that names no runnable thing, `PathError` for a file that is not bundle-internal.
 * Needs no bundle: a host calls it at registration time to refuse a bad `run` early.
 */
export function parseRun(run: RunValue, options: RunOptions = {}): ParsedRun {
  const runners = options.runners ?? DEFAULT_RUNNERS;
  const value: unknown = run;
  if (typeof value === 'string') return parseString(value, runners);
  if (Array.isArray(value)) return parseExec(value, value);
  if (isObject(value)) {
    const found = DISCRIMINATORS.filter((key) => Object.hasOwn(value, key));
    if (found.length > 1) {
      throw new RunResolutionError(
        'ambiguous',
        value,
        `has ${found.map((k) => `"${k}"`).join(' and ')}; an explicit run takes exactly one of "file", "exec", "shell"`,
      );
    }
    // The explicit discriminator is honoured whatever the value looks like (ADAPTER.md).
    switch (found[0]) {
      case 'file':
        return parseExplicitFile(value.file, value, runners);
      case 'exec':
        if (!Array.isArray(value.exec))
          throw new RunResolutionError('invalid-shape', value, '"exec" must be an array of strings');
        return parseExec(value.exec, value);
      case 'shell':
        return { form: 'shell', command: checkShell(value.shell, value) };
      default:
        break;
    }
  }
  throw new RunResolutionError(
    'invalid-shape',
    value,
    'must be a string, an array of strings, or an object with one of "file", "exec", "shell"',
  );
}

function checkText(text: string, value: unknown, what: string): string {
  if (text.trim() === '') throw new RunResolutionError('empty', value, `${what} is empty`);
  // execve(2) ends every argument at a NUL: what ran would not be what was checked.
  if (text.includes('\0')) throw new RunResolutionError('nul', value, `${what} contains a NUL character`);
  return text;
}

function checkShell(command: unknown, value: unknown): string {
  if (typeof command !== 'string') throw new RunResolutionError('invalid-shape', value, '"shell" must be a string');
  return checkText(command, value, 'the shell command');
}

function parseExplicitFile(file: unknown, value: unknown, runners: RunnerTable): ParsedRun {
  if (typeof file !== 'string') throw new RunResolutionError('invalid-shape', value, '"file" must be a string');
  if (file === '') throw new RunResolutionError('empty', value, 'the file is empty');
  return fileForm(file, [], value, runners);
}

function parseExec(argv: readonly unknown[], value: unknown): ParsedRun {
  if (argv.length === 0) throw new RunResolutionError('empty', value, 'the exec argv is empty');
  const strings: string[] = [];
  for (const arg of argv) {
    if (typeof arg !== 'string')
      throw new RunResolutionError('invalid-shape', value, 'every exec argument must be a string');
    if (arg.includes('\0')) throw new RunResolutionError('nul', value, 'an exec argument contains a NUL character');
    strings.push(arg);
  }
  const [cmd, ...args] = strings as [string, ...string[]];
  // Later arguments may be empty (`["grep", "", "f"]` is meaningful); the command may not.
  if (cmd === '') throw new RunResolutionError('empty', value, 'the command (argv[0]) is empty');
  return { form: 'exec', argv: [cmd, ...args] };
}

/**
 * The string form:
 * 1. a shell operator anywhere → shell, verbatim;
 * 2. else split into words, bash-like (quotes group and are removed; a lone quote refuses);
 * 3. one word → that word is a bundle file (the seed: a bare `python` is an unknown extension);
 * 4. several words → a file with arguments when the first word has a known runner
 *    extension (ADAPTER.md: shell only when "the prefix isn't a recognized
 *    extension+filename"), otherwise shell, verbatim.
 */
function parseString(text: string, runners: RunnerTable): ParsedRun {
  checkText(text, text, 'the command');
  if (hasShellOperator(text)) return { form: 'shell', command: text };
  const split = splitWords(text);
  if (!split.ok) {
    throw new RunResolutionError(
      'unbalanced-quote',
      text,
      'has a quote that is never closed; write run: { file: … } or run: { shell: … } to say which is meant',
    );
  }
  const [first, ...rest] = split.words;
  if (first === undefined) throw new RunResolutionError('empty', text, 'the command is empty');
  if (rest.length === 0) return fileForm(first, [], text, runners);
  if (runnerFor(runners, posix.extname(first)) !== undefined) return fileForm(first, rest, text, runners);
  return { form: 'shell', command: text };
}

function fileForm(raw: string, args: readonly string[], value: unknown, runners: RunnerTable): ParsedRun {
  // Path safety first: `../x.js` and `/bin/x.js` are refused as paths (PathError), whatever
  // their extension.
  const file = normalizeManifestPath('run.file', raw).path;
  const extension = posix.extname(file);
  if (runnerFor(runners, extension) === undefined) {
    const known = Object.keys(runners).join(', ');
    const detail =
      extension === ''
        ? `file ${JSON.stringify(file)} has no extension, so no runner can be inferred (known: ${known}); for a command, use the exec form: run: [${JSON.stringify(file)}, …]`
        : `unknown extension ${JSON.stringify(extension)} of ${JSON.stringify(file)} (known: ${known}); use the exec form to name the runner`;
    throw new RunResolutionError('unknown-extension', value, detail, { extension });
  }
  return { form: 'file', file, args };
}

/**
 * Whether the string form of `run` is a shell command (`bash -c`), by the rules of
 * `parseString` above. A string with an unclosed quote is not (it is refused instead).
 */
export function looksLikeShell(text: string, options: RunOptions = {}): boolean {
  if (hasShellOperator(text)) return true;
  const split = splitWords(text);
  if (!split.ok) return false;
  const [first, ...rest] = split.words;
  return (
    first !== undefined &&
    rest.length > 0 &&
    runnerFor(options.runners ?? DEFAULT_RUNNERS, posix.extname(first)) === undefined
  );
}
