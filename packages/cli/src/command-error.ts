/** A command could not do its job for a reason outside any library (a missing folder, ...): exit 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}
