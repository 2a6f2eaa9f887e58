import type { GiveUpReason } from './plan-retry.js';

/**
 * Thrown by `retry()` when it stops retrying a retryable failure: attempts or budget ran out, a Retry-After
 * hint lands past the budget, the retry budget refused, or the circuit breaker opened.
 * The last failure is `lastError` (also `cause`).
 */
export class RetryExhaustedError extends Error {
  override readonly name = 'RetryExhaustedError';
  readonly code = 'RETRY_EXHAUSTED';
  /** Attempts made. */
  readonly attempts: number;
  /** Time from the start of the first attempt to giving up, in ms. */
  readonly elapsedMs: number;
  /** Why retrying stopped. */
  readonly reason: GiveUpReason;
  /** The last error, or a {@link RetryableResultError} when the last attempt returned a result judged retryable. */
  readonly lastError: unknown;

  constructor(init: { attempts: number; elapsedMs: number; reason: GiveUpReason; lastError: unknown }) {
    super(
      `gave up after ${init.attempts} attempt${init.attempts === 1 ? '' : 's'} in ${Math.round(init.elapsedMs)} ms ` +
        `(${init.reason}): ${describe(init.lastError)}`,
      { cause: init.lastError },
    );
    this.attempts = init.attempts;
    this.elapsedMs = init.elapsedMs;
    this.reason = init.reason;
    this.lastError = init.lastError;
  }
}

/** Stands for a result that `retryOnResult` judged retryable (e.g. an HTTP 503 response); the result is `result`. */
export class RetryableResultError<T = unknown> extends Error {
  override readonly name = 'RetryableResultError';
  readonly code = 'RETRYABLE_RESULT';
  constructor(readonly result: T) {
    super(`the result was judged retryable${statusOf(result)}`);
  }
}

function statusOf(result: unknown): string {
  const status = (result as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? ` (status ${status})` : '';
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
