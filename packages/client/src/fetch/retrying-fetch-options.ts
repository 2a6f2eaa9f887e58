import type { AttemptEvent, CircuitBreakerOptions, Clock, Random, RetryPolicy } from '@retryd/core';

/** Options of {@link createRetryingFetch}. All optional. */
export interface RetryingFetchOptions {
  /**
   * The retry policy (attempts, backoff, jitter, `totalBudgetMs` as the deadline of the whole call, the statuses to
   * retry), as some of its fields over core's `DEFAULT_POLICY` and a deadline of 30 s (`IN_REQUEST_DEADLINE_MS`):
   * 3 attempts, exponential from 100 ms up to 10 s with full jitter, statuses 408, 425, 429, 500, 502, 503, 504.
   * A `Retry-After` is honoured up to `maxDelayMs` and the deadline; a longer one gives up at once.
   */
  policy?: Partial<RetryPolicy>;
  /**
   * A circuit breaker per origin, with these options (core's defaults when `{}`), or `false` for none.
   * Default: one with core's defaults.
   */
  breaker?: CircuitBreakerOptions | false;
  /** Methods that get a derived `Idempotency-Key` when the caller sent none. Default `['POST', 'PATCH']`. */
  keyedMethods?: readonly string[];
  /** Whether a thrown error is worth another attempt. Default: core's `isRetryableError`, plus browsers' network failures. */
  retryOnError?: (error: unknown) => boolean;
  /** Every attempt's outcome (core's `AttemptEvent`), for logs and metrics. */
  onAttempt?: (event: AttemptEvent) => void;
  /** The `fetch` to call. Default `globalThis.fetch`, read at each call. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Time source and sleeps (default the system clock). */
  clock?: Clock;
  /** Randomness for jitter (default `Math.random`). */
  random?: Random;
  /** Wall-clock time for HTTP-date Retry-After values (default `Date.now`). */
  wallClock?: () => number;
}
