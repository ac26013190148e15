import { CommandError } from './command-error.js';
import { printable } from './format.js';
import { type Group, helpPointer } from './help.js';
import { type CodedError, hintFor } from './hints.js';
import { EXIT_FAILURE, EXIT_USAGE } from './io.js';
import type { Terminal } from './terminal.js';
import { UsageError } from './usage.js';

/** One failure as printed: `agentproto: [CODE: ]message`, then `hint: …` when there is one. */
export interface Failure {
  code?: string;
  message: string;
  hint?: string;
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
  if (term.verbose && failure.error !== undefined) lines.push(...causeLines(failure.error));
  if (failure.hint !== undefined) lines.push(`${term.dim('hint:')} ${printable(failure.hint)}`);
  term.stderr.write(`${lines.join('\n')}\n`);
}

/**
 * What `main` does with anything a command throws, and its exit status: a wrong command
 * line is one line and a pointer to the group's help (2); an error with a stable code is
 * `agentproto: <CODE>: <message>` and its hint (1); anything else is one line too, with its
 * stack only under --verbose (1).
 */
export function reportFailure(error: unknown, term: Terminal, group: Group | undefined): number {
  if (error instanceof UsageError) {
    term.stderr.write(`agentproto: ${printable(error.message)}\n${helpPointer(group)}\n`);
    return EXIT_USAGE;
  }
  // Library errors carry a stable code a script can match on; the message names the path or key.
  if (hasStableCode(error)) {
    const hint = hintFor(error, { group });
    printFailure(term, { code: error.code, message: error.message, error, ...(hint === undefined ? {} : { hint }) });
    return EXIT_FAILURE;
  }
  if (error instanceof CommandError) {
    printFailure(term, { message: error.message, error, ...(error.hint === undefined ? {} : { hint: error.hint }) });
    return EXIT_FAILURE;
  }
  const message = error instanceof Error ? error.message : String(error);
  printFailure(term, {
    message: `unexpected error: ${message}`,
    error,
    ...(term.verbose ? {} : { hint: 'run again with --verbose to see its cause and stack trace' }),
  });
  if (term.verbose && error instanceof Error) term.stderr.write(stackFrames(error));
  return EXIT_FAILURE;
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
