/**
 * Thrown instead of retrying a request whose body is a stream: a stream is consumed by the first attempt and cannot
 * be sent again, so the failure that would have been retried is reported with the reason (it is `cause`, and the
 * failed response, if any, is `response`).
 */
export class BodyNotReplayableError extends Error {
  override readonly name = 'BodyNotReplayableError';
  readonly code = 'BODY_NOT_REPLAYABLE';
  /** Read by `retry()`: this failure must end the call. */
  readonly retryable = false;
  /** The response judged retryable, when the attempt got one (its body is left unread for the caller). */
  readonly response: unknown;

  constructor(failure: string, options: { cause?: unknown; response?: unknown }) {
    super(
      `not retried: ${failure}, but the request body is a stream, which the first attempt consumed and cannot be ` +
        'sent again; pass the body as a string, bytes, a Blob, FormData or URLSearchParams to have it retried',
      { cause: options.cause },
    );
    this.response = options.response;
  }
}
