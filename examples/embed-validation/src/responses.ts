import { ArchiveError } from '@agentproto/archive';
import { BodyTooLargeError } from './errors.js';

export interface JsonResponse {
  status: number;
  body: unknown;
  /** Headers besides the content type and length. */
  headers?: Record<string, string>;
}

/** The error body every refusal shares: a stable `code`, the facts as fields, a message for people. */
export function errorResponse(
  status: number,
  code: string,
  message: string,
  facts: Record<string, unknown> = {},
  headers?: Record<string, string>,
): JsonResponse {
  return { status, body: { error: { code, ...facts, message } }, ...(headers ? { headers } : {}) };
}

/**
 * What the client is told about a failure. Archive and size refusals are the client's
 * (400, 413) and say exactly what was refused; anything else is ours (500) and says
 * nothing, since it may hold a path of this machine. Undefined for a failure nobody can be
 * told about (the client is gone).
 */
export function failureResponse(error: unknown): JsonResponse {
  if (error instanceof BodyTooLargeError) {
    return errorResponse(413, error.code, error.message, { limit: error.limit, declared: error.declared ?? null });
  }
  if (error instanceof ArchiveError) {
    // The entry name is the archive's own, JSON-escaped by the serializer: a name holding
    // control characters cannot forge a line of the client's log.
    return errorResponse(400, error.code, error.message, { reason: error.reason, entry: error.entry ?? null });
  }
  return errorResponse(500, 'INTERNAL_ERROR', 'the plugin could not be validated');
}
