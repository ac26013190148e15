/** Anything with a `write(text)`: process.stdout, a stream, or a test's collector. */
export interface Writer {
  write(text: string): unknown;
}

/** Where a command writes. Injected so tests run `main` in-process and read what it printed. */
export interface CliIO {
  stdout: Writer;
  stderr: Writer;
}

/** Everything asked for was done (verify: every object is intact). */
export const EXIT_OK = 0;
/** The command ran and failed, or verify found a corrupt object. */
export const EXIT_FAILURE = 1;
/** The command line itself was wrong; nothing was attempted. */
export const EXIT_USAGE = 2;

/** Prints `value` as the one JSON document a `--json` command writes to stdout. */
export function printJson(io: CliIO, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
