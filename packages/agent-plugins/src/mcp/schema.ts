import { validateServer } from '../generated/validators.js';

/**
 * Whether the official `#/$defs/server` accepts `entry`. The code checks report every rule
 * with its own finding; this is the backstop that keeps them from ever accepting an entry the
 * published schema refuses. The server definitions are the same in every pinned version (a test
 * pins that), so one validator, compiled at build from 1.0.0 (scripts/validators.ts), serves both.
 */
export function serverSchemaAccepts(entry: unknown): boolean {
  return validateServer(entry) === true;
}
