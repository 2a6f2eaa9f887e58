import { computeDelay, MAX_ATTEMPTS_LIMIT, type Random, type RetryPolicy } from '@retryd/core';

/** The contention model's constants, from the AWS Architecture Blog post "Exponential Backoff And Jitter" (2015). */
export const CONTENTION_BACKOFF = Object.freeze({
  /** `base` of the post, in ms. */
  baseMs: 5,
  /** `cap` of the post, in ms. */
  capMs: 2_000,
});

/** The backoff strategies the contention model compares, in the order tables and charts list them. */
export const ContentionStrategy = {
  NONE: 'none',
  EXPONENTIAL: 'exponential',
  FULL: 'full',
  EQUAL: 'equal',
  DECORRELATED: 'decorrelated',
} as const;
export type ContentionStrategy = (typeof ContentionStrategy)[keyof typeof ContentionStrategy];

/** Every strategy, in display order. */
export const CONTENTION_STRATEGIES: readonly ContentionStrategy[] = Object.freeze(Object.values(ContentionStrategy));

// The post's clients retry until they succeed; the policy's attempt limit is never reached and computeDelay
// does not read it, but a policy must have one to be valid.
const UNLIMITED = MAX_ATTEMPTS_LIMIT;

// The post sleeps min(cap, base·2^n) after the n-th conflict, n = 1 first; computeDelay's EXPONENTIAL base is
// initialDelayMs·multiplier^(n−1). So initialDelayMs = 2·base and multiplier 2 give the post's schedule exactly:
// 10, 20, 40 … 1280, then 2000 from n = 9 on.
const exponential = (jitterType: RetryPolicy['jitterType']): Readonly<RetryPolicy> =>
  Object.freeze({
    maxAttempts: UNLIMITED,
    backoffType: 'EXPONENTIAL',
    initialDelayMs: 2 * CONTENTION_BACKOFF.baseMs,
    multiplier: 2,
    maxDelayMs: CONTENTION_BACKOFF.capMs,
    jitterType,
  });

/**
 * The retry policy that makes `computeDelay` give each strategy's sleep after the n-th conflict, or `null` for
 * `none` (retry at once: the absence of a policy, which no valid policy expresses since `initialDelayMs > 0`).
 *
 * - `exponential` `min(cap, base·2^n)`; `full` `uniform(0, that)`; `equal` `that/2 + uniform(0, that/2)`:
 *   EXPONENTIAL from `2·base`, ×2, capped at `cap`, with NONE, FULL and EQUAL jitter.
 * - `decorrelated` `min(cap, uniform(base, prev·3))`, `prev` starting at `base`: DECORRELATED from `base`, capped
 *   at `cap`; computeDelay reads a previous delay of 0 (the first retry) as `initialDelayMs`, which is `base`.
 */
export const CONTENTION_POLICIES: Readonly<Record<ContentionStrategy, Readonly<RetryPolicy> | null>> = Object.freeze({
  none: null,
  exponential: exponential('NONE'),
  full: exponential('FULL'),
  equal: exponential('EQUAL'),
  decorrelated: Object.freeze({
    maxAttempts: UNLIMITED,
    backoffType: 'EXPONENTIAL',
    initialDelayMs: CONTENTION_BACKOFF.baseMs,
    multiplier: 2,
    maxDelayMs: CONTENTION_BACKOFF.capMs,
    jitterType: 'DECORRELATED',
  }),
});

/**
 * The sleep in ms after a client's `conflict`-th conflict (1 for the first) under `strategy`, through
 * `computeDelay` with {@link CONTENTION_POLICIES}.
 *
 * @param previousSleepMs - the sleep after the conflict before, 0 before the first (read by `decorrelated` only)
 */
export function contentionSleep(strategy: ContentionStrategy, conflict: number, previousSleepMs: number, random: Random): number {
  const policy = CONTENTION_POLICIES[strategy];
  return policy === null ? 0 : computeDelay(policy, conflict, previousSleepMs, random);
}
