/** How the base delay grows with the retry number. */
export const BackoffType = {
  EXPONENTIAL: 'EXPONENTIAL',
  LINEAR: 'LINEAR',
  FIXED: 'FIXED',
} as const;
export type BackoffType = (typeof BackoffType)[keyof typeof BackoffType];

/**
 * How randomness spreads the delay so that many clients failing together do not retry together
 * (see the AWS Architecture Blog, "Exponential Backoff And Jitter").
 */
export const JitterType = {
  NONE: 'NONE',
  FULL: 'FULL',
  EQUAL: 'EQUAL',
  DECORRELATED: 'DECORRELATED',
} as const;
export type JitterType = (typeof JitterType)[keyof typeof JitterType];

/**
 * A retry policy: plain, serialisable data, shared by the library, the service's HTTP API and its stores.
 * Validate untrusted input with {@link validatePolicy}.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included: `>= 1`; `1` means no retries. */
  maxAttempts: number;
  backoffType: BackoffType;
  /** Delay before the first retry, in ms: `> 0`. */
  initialDelayMs: number;
  /** Growth factor of EXPONENTIAL backoff: `>= 1` (ignored by LINEAR and FIXED). */
  multiplier: number;
  /** No computed delay exceeds this, in ms: `>= initialDelayMs`. */
  maxDelayMs: number;
  jitterType: JitterType;
  /** Wall-clock budget measured from the start of the first attempt, in ms. Absent: no budget. */
  totalBudgetMs?: number;
  /** Headroom kept in the budget for the next call, in ms: no attempt starts with less than this left. */
  estimatedCallMs?: number;
  /** HTTP statuses worth retrying. Default {@link DEFAULT_RETRYABLE_STATUS_CODES}. */
  retryableStatusCodes?: number[];
}

/**
 * Statuses retried when a policy names none: 408 Request Timeout, 425 Too Early, 429 Too Many Requests,
 * 500, 502, 503 and 504. Every other 4xx means the request itself is wrong and will fail again.
 */
export const DEFAULT_RETRYABLE_STATUS_CODES: readonly number[] = Object.freeze([408, 425, 429, 500, 502, 503, 504]);

/**
 * The library's defaults for fields a caller leaves out of `retry()`'s policy:
 * 3 attempts, exponential from 100 ms doubling up to 10 s, full jitter, no budget.
 */
export const DEFAULT_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 3,
  backoffType: BackoffType.EXPONENTIAL,
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 10_000,
  jitterType: JitterType.FULL,
});

/** The statuses a policy retries: its own list, or the defaults. */
export function retryableStatusCodesOf(policy: Pick<RetryPolicy, 'retryableStatusCodes'>): readonly number[] {
  return policy.retryableStatusCodes ?? DEFAULT_RETRYABLE_STATUS_CODES;
}
