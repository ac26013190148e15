import { ManifestValidationError, checkCode } from '../schema/index.js';

/** Refuses a `code` block that fails the AIP-26 schema, with every problem and its pointer. */
export function validateCode(code: unknown, pointer = '/code'): void {
  const result = checkCode(code, { pointer });
  if (!result.ok) throw new ManifestValidationError(result.problems, { subject: 'code block' });
}
