/**
 * The command line was wrong: exit 2 with the message, what was probably meant, and a
 * pointer to the help; nothing attempted. Its code, for `--json`, is CLI_USAGE.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'CLI_USAGE';
  /** The closest valid word, as the user would type it: `code check`, `--json`. */
  readonly suggestion: string | undefined;
  constructor(message: string, options: { suggestion?: string } = {}) {
    super(message);
    this.suggestion = options.suggestion;
  }
}
