/** A command could not do its job for a reason outside any library (a missing folder, ...): exit 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
  /** What the user can do about it, printed as a `hint:` line. */
  readonly hint: string | undefined;
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options.hint;
  }
}
