import type { FailureClass } from '../http/failure-class.js';
import type { BackoffSchedule, RetryPolicy } from '../policy/retry-policy.js';

/**
 * The schedule a retry after a failure of class `failureClass` follows: the class's own fields in
 * `policy.backoffByClass` over the policy's main schedule, or the policy itself when the class is undefined or has
 * no schedule of its own. Pure.
 *
 * @example
 * ```ts
 * const policy = { ...DEFAULT_POLICY, backoffByClass: { rateLimited: { initialDelayMs: 5_000, maxDelayMs: 60_000 } } };
 * scheduleFor(policy, 'rateLimited'); // EXPONENTIAL ×2 from 5 s to 60 s, FULL jitter
 * scheduleFor(policy, 'serverError'); // the policy: from 100 ms to 10 s
 * ```
 */
export function scheduleFor(policy: RetryPolicy, failureClass: FailureClass | undefined): BackoffSchedule {
  const own = failureClass === undefined ? undefined : policy.backoffByClass?.[failureClass];
  if (own === undefined) return policy;
  return {
    backoffType: own.backoffType ?? policy.backoffType,
    initialDelayMs: own.initialDelayMs ?? policy.initialDelayMs,
    multiplier: own.multiplier ?? policy.multiplier,
    maxDelayMs: own.maxDelayMs ?? policy.maxDelayMs,
    jitterType: own.jitterType ?? policy.jitterType,
  };
}
