/**
 * The base of every error this package throws. Callers branch on `code`, which is stable;
 * the facts are fields of each subclass; the message is for humans and never holds a
 * credential.
 */
export class SkillError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }

  /** `name`, `code`, `message` and the facts; never the cause, which is for debugging. */
  toJSON(): Record<string, unknown> {
    return { ...(this as object), message: this.message };
  }
}
