import { printable } from './format.js';
import type { CliIO, Writer } from './io.js';

/** What the command line asked about the output itself. */
export interface OutputOptions {
  /** `--json`: stdout is one JSON document; stderr gets no colour and no progress. */
  json: boolean;
  /** `--verbose`: errors show their cause chain. */
  verbose: boolean;
}

/**
 * How one run prints. Its `stdout` and `stderr` are the caller's, wrapped so that a status
 * line on the terminal is erased before anything else is written.
 */
export interface Terminal extends CliIO, OutputOptions {
  /** Whether stderr gets colour: see {@link wantsColour}. stdout never does. */
  readonly colour: boolean;
  red(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
  /**
   * A line about work under way (`fetching review at …`): on stderr in human output, dim
   * when coloured; never with --json, where stderr holds only warnings and errors.
   */
  progress(line: string): void;
  /**
   * A transient status (`pushing 3 of 10 …`) on a colour terminal only: the next status
   * replaces it, and it is erased before any other output. Elsewhere nothing is printed,
   * since the command prints its results anyway.
   */
  status(line: string): void;
  /** Erases the status line, if one is showing. */
  clearStatus(): void;
}

/**
 * Colour only for a person at a terminal: stderr is a TTY, the output is not --json (a
 * program reads it), `NO_COLOR` is unset or empty (no-color.org), and TERM is not `dumb`.
 */
function wantsColour(io: CliIO, json: boolean): boolean {
  const env = io.env ?? process.env;
  return io.stderr.isTTY === true && !json && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
}

const sgr = (on: number, off: number) => (text: string) => `\x1b[${on}m${text}\x1b[${off}m`;
const plain = (text: string) => text;
/** Carriage return, then erase the whole line: where a status line was, nothing is left. */
const ERASE_LINE = '\r\x1b[2K';
/** Narrower than any terminal a person works in, so a status line never wraps. */
const STATUS_WIDTH = 72;

export function openTerminal(io: CliIO, options: OutputOptions): Terminal {
  const colour = wantsColour(io, options.json);
  let statusShown = false;
  const clearStatus = () => {
    if (!statusShown) return;
    statusShown = false;
    io.stderr.write(ERASE_LINE);
  };
  // stdout shares the screen with stderr only when it is a terminal too; into a pipe or a
  // file it never holds an escape sequence.
  const wrap = (writer: Writer, sharesScreen: boolean): Writer => ({
    write: (text: string) => {
      if (sharesScreen) clearStatus();
      return writer.write(text);
    },
    ...(writer.isTTY === undefined ? {} : { isTTY: writer.isTTY }),
  });
  const stderr = wrap(io.stderr, true);
  const dim = colour ? sgr(2, 22) : plain;
  return {
    stdout: wrap(io.stdout, io.stdout.isTTY === true),
    stderr,
    ...(io.env === undefined ? {} : { env: io.env }),
    json: options.json,
    verbose: options.verbose,
    colour,
    red: colour ? sgr(31, 39) : plain,
    yellow: colour ? sgr(33, 39) : plain,
    dim,
    progress: (line) => {
      if (!options.json) stderr.write(`${dim(printable(line))}\n`);
    },
    status: (line) => {
      if (!colour) return;
      // A line wider than the terminal would wrap, and erasing would leave its first row.
      const text = printable(line);
      const short = text.length > STATUS_WIDTH ? `${text.slice(0, STATUS_WIDTH - 1)}…` : text;
      io.stderr.write(`${ERASE_LINE}${dim(short)}`);
      statusShown = true;
    },
    clearStatus,
  };
}
