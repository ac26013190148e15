/**
 * The request body is larger than the server takes. `declared` is the Content-Length when
 * the client sent one; otherwise the body was counted as it arrived and cut at `limit`.
 */
export class BodyTooLargeError extends Error {
  readonly code = 'BODY_TOO_LARGE';
  constructor(
    readonly limit: number,
    readonly declared: number | undefined,
  ) {
    super(
      declared === undefined
        ? `the request body is over ${limit} bytes`
        : `the request body is ${declared} bytes, over ${limit}`,
    );
    this.name = 'BodyTooLargeError';
  }
}

/** The client went away before its body arrived; there is nobody to answer. */
export class BodyAbortedError extends Error {
  readonly code = 'BODY_ABORTED';
  constructor() {
    super('the client closed the connection before the body was complete');
    this.name = 'BodyAbortedError';
  }
}
