/**
 * The command line was wrong: exit 2 with the message and a pointer to the help, nothing
 * attempted.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
