import { CommandError } from './command-error.js';
import { printable } from './format.js';
import { helpPointer } from './help.js';
import { type CodedError, hintFor } from './hints.js';
import { EXIT_FAILURE, EXIT_USAGE, printJson } from './io.js';
import type { Terminal } from './terminal.js';
import { UsageError } from './usage.js';

/** One failure as printed: `agentproto: [CODE: ]message`, then `hint: …` when there is one. */
export interface Failure {
  code?: string;
  message: string;
  hint?: string;
  /** The closest valid word to a mistyped one: `Did you mean "code check"?`. */
  suggestion?: string;
  /** Printed under --verbose only: each cause of the chain on its own line. */
  error?: unknown;
}

/** How deep a cause chain is followed; a chain that loops ends at the first repeat anyway. */
const MAX_CAUSES = 8;

/**
 * Prints a failure on stderr. The error line stays one line whatever the message holds
 * (controls are escaped); the code is red on a colour terminal.
 */
export function printFailure(term: Terminal, failure: Failure): void {
  const code = failure.code === undefined ? '' : `${term.red(failure.code)}: `;
  const lines = [`agentproto: ${code}${printable(redact(failure.message))}`];
  // A parse error shows the offending line and a caret under it, each line printable on its own.
  for (const line of excerptOf(failure.error)?.split('\n') ?? []) lines.push(printable(redact(line)));
  if (failure.suggestion !== undefined) lines.push(`Did you mean ${JSON.stringify(failure.suggestion)}?`);
  if (term.verbose && failure.error !== undefined) lines.push(...causeLines(failure.error));
  if (failure.hint !== undefined) lines.push(`${term.dim('hint:')} ${printable(failure.hint)}`);
  term.stderr.write(`${lines.join('\n')}\n`);
}

/** Which command a failure belongs to, as far as the command line names one. */
export interface FailureContext {
  group?: string;
  sub?: string;
}

/** The code of an error a command raises without a library code (a CommandError). */
const COMMAND_FAILED = 'CLI_COMMAND_FAILED';
/** The code of an error nobody named: a bug, or a failure of Node itself. */
const UNEXPECTED = 'CLI_UNEXPECTED';

/**
 * What `main` does with anything a command throws, and its exit status: a wrong command
 * line is one line, what was probably meant, and a pointer to the help (2); an error with a
 * stable code is `agentproto: <CODE>: <message>` and its hint (1); anything else is one line
 * too, with its stack only under --verbose (1). With --json the same failure is one JSON
 * document on stdout, `{ "error": { code, message, hint?, suggestion? } }`, and stderr stays
 * empty; the exit status is the same.
 */
export function reportFailure(error: unknown, term: Terminal, context: FailureContext): number {
  const failure = failureOf(error, term, context);
  if (term.json) {
    const { code = UNEXPECTED, message, hint, suggestion } = failure;
    const excerpt = excerptOf(error);
    printJson(term, {
      error: {
        code,
        message: redact(message),
        ...(hint === undefined ? {} : { hint }),
        ...(suggestion === undefined ? {} : { suggestion }),
        ...(excerpt === undefined ? {} : { excerpt }),
      },
    });
    return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
  }
  if (error instanceof UsageError) {
    // The help pointer is a line of its own, not a hint: the command line, not the work, failed.
    const suggestion = failure.suggestion === undefined ? [] : [`Did you mean ${JSON.stringify(failure.suggestion)}?`];
    term.stderr.write(`${[`agentproto: ${printable(failure.message)}`, ...suggestion, failure.hint].join('\n')}\n`);
    return EXIT_USAGE;
  }
  printFailure(term, failure);
  const unexpected = !hasStableCode(error) && !(error instanceof CommandError);
  if (term.verbose && unexpected && error instanceof Error) term.stderr.write(stackFrames(error));
  return EXIT_FAILURE;
}

function failureOf(error: unknown, term: Terminal, context: FailureContext): Failure {
  if (error instanceof UsageError) {
    const { suggestion } = error;
    return {
      code: error.code,
      message: error.message,
      hint: helpPointer(context.group, context.sub),
      ...(suggestion === undefined ? {} : { suggestion }),
    };
  }
  // Library errors carry a stable code a script can match on; the message names the path or key.
  if (hasStableCode(error)) {
    const hint = hintFor(error, { group: context.group });
    return { code: error.code, message: error.message, error, ...(hint === undefined ? {} : { hint }) };
  }
  if (error instanceof CommandError) {
    return {
      ...(term.json ? { code: COMMAND_FAILED } : {}),
      message: error.message,
      error,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    ...(term.json ? { code: UNEXPECTED } : {}),
    message: `unexpected error: ${message}`,
    error,
    ...(term.verbose ? {} : { hint: 'run again with --verbose to see its cause and stack trace' }),
  };
}

/**
 * The excerpt of a parse error (`  12 | name = "x` and a caret line), on the error or on
 * the first cause that has one.
 */
function excerptOf(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current = error;
  while (current !== null && typeof current === 'object' && !seen.has(current) && seen.size < MAX_CAUSES) {
    seen.add(current);
    const excerpt = (current as { excerpt?: unknown }).excerpt;
    if (typeof excerpt === 'string' && excerpt !== '') return excerpt;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function hasStableCode(error: unknown): error is CodedError {
  const code: unknown = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code);
}

/** `  cause: <name> <CODE>: <message>`, one line per link of the chain below `error`. */
function causeLines(error: unknown): string[] {
  const lines: string[] = [];
  const seen = new Set<unknown>([error]);
  let cause = (error as { cause?: unknown } | null)?.cause;
  while (cause !== undefined && !seen.has(cause) && lines.length < MAX_CAUSES) {
    seen.add(cause);
    lines.push(`  cause: ${printable(redact(describe(cause)))}`);
    cause = (cause as { cause?: unknown } | null)?.cause;
  }
  return lines;
}

function describe(value: unknown): string {
  if (!(value instanceof Error)) return String(value);
  const code = (value as { code?: unknown }).code;
  return `${value.name}${typeof code === 'string' || typeof code === 'number' ? ` ${code}` : ''}: ${value.message}`;
}

/** The `at …` lines of an error's stack, indented; nothing when it has none. */
function stackFrames(error: Error): string {
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  return frames.map((line) => `  ${printable(redact(line.trim()))}\n`).join('');
}

/**
 * The packages' messages never hold a credential; causes may come from elsewhere (Node, a
 * provider package), so credentials in a URL are masked in anything this prints: the
 * whole user part of an http(s) URL (a token often stands there alone), the password of
 * any other (`ssh://git@host` keeps its harmless `git`).
 */
function redact(text: string): string {
  return text
    .replace(/\b(https?:\/\/)[^/\s@]+@/gi, '$1***@')
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@]*):[^/\s@]+@/gi, '$1:***@');
}
