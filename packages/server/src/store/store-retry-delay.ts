import { computeDelay, MAX_ATTEMPTS_LIMIT, type Random, type RetryPolicy } from '@retryd/core';

/**
 * How the service retries its own store: a failing store operation in the engine (`StoreBackoff`), the Redis
 * client's reconnects (`retryStrategy`) and the PostgreSQL LISTEN connection's. Exponential from 50 ms, doubling,
 * capped at 5 s, with **full jitter**: each wait is uniform in `[0, min(5 s, 50 ms × 2^(n−1)))`.
 *
 * Why jitter: every instance loses its store at the same moment (a failover, a restart), and without jitter they all
 * come back in lockstep, each wave of reconnects landing on a database that is just starting. Why FULL rather than
 * DECORRELATED: it needs nothing but the attempt number (ioredis's `retryStrategy` is given only that, so the Redis
 * client keeps no state of its own), it spreads instances over the whole window (the least contention in the AWS
 * comparison of jitters), and its mean wait is half the cap, so a store that comes back is found again sooner.
 * A wait close to 0 now and then costs one cheap connection attempt.
 *
 * `maxAttempts` is not read: the service never gives up on its own store (it is the largest a policy may carry, so
 * the object stays a valid policy).
 */
export const STORE_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: MAX_ATTEMPTS_LIMIT,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 50,
  multiplier: 2,
  maxDelayMs: 5_000,
  jitterType: 'FULL',
});

/**
 * The wait before the service's `attempt`-th retry of its own store (1 = the first retry after a failure), in whole
 * ms: core's `computeDelay` on {@link STORE_RETRY_POLICY}, like every retry the service makes for its users.
 *
 * @param attempt - 1 for the first retry after a success, then 2, 3, …
 * @param previousDelayMs - the wait chosen before the previous retry (0 before the first); unused by full jitter,
 *   taken so that the policy can change its jitter without its callers changing
 * @param random - uniform in `[0, 1)`; default `Math.random`
 * @example
 * ```ts
 * retryStrategy: (times) => storeRetryDelay(times, 0);
 * ```
 */
export function storeRetryDelay(attempt: number, previousDelayMs: number, random: Random = Math.random): number {
  return Math.round(computeDelay(STORE_RETRY_POLICY, attempt, previousDelayMs, random));
}
