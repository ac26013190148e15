/** Anything with a `write(text)`: process.stdout, a stream, or a test's collector. */
export interface Writer {
  write(text: string): unknown;
  /** True when the stream is a terminal (a person reads it); colour and progress need it. */
  isTTY?: boolean;
}

/** Where a command writes. Injected so tests run `main` in-process and read what it printed. */
export interface CliIO {
  stdout: Writer;
  stderr: Writer;
  /** The environment `NO_COLOR` and `TERM` are read from; process.env when absent. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Everything asked for was done (verify: every object is intact). */
export const EXIT_OK = 0;
/**
 * Problems found: the command ran and failed, or found what it checks for (a corrupt object,
 * a rejected or drifted plugin, a key that did not push or pull, a run that exited non-zero).
 */
export const EXIT_FAILURE = 1;
/** The command line itself was wrong (nothing was attempted), or a `--strict` check failed. */
export const EXIT_USAGE = 2;

/** Prints `value` as the one JSON document a `--json` command writes to stdout. */
export function printJson(io: CliIO, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
