import type { RetryPolicy } from '@retryd/core';

/** The id of the policy that exists from the start and applies when a task names none. */
export const DEFAULT_POLICY_ID = 'default';

/**
 * What a tenant's `default` policy is, one rule everywhere: until the tenant registers (or changes) its own, its
 * `default` is this built-in policy. It is registered for the tenant the first time the tenant needs it (an enqueue
 * that names no policy or `default`, a read of `default`), so it can be read and changed like any other; and the
 * engine runs a task whose tenant's `default` is somehow not stored on this same built-in policy. The `default`
 * tenant's is registered at start-up. An existing `default` is never overwritten.
 *
 * The built-in policy:
 * 10 attempts; exponential from 1 s, ×3, capped at 1 h (1 s, 3 s, 9 s, … 36 min, 1 h); full jitter, which
 * `retryd simulate contention` shows puts the least load on a contended downstream (as few calls as equal jitter,
 * finishing 26–60% sooner; see docs/simulate.md); a 24 h budget from the task's creation with 30 s
 * (the default attempt timeout) kept for the call; the standard retryable statuses.
 */
export const DEFAULT_SERVICE_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 10,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 1_000,
  multiplier: 3,
  maxDelayMs: 3_600_000,
  jitterType: 'FULL',
  totalBudgetMs: 86_400_000,
  estimatedCallMs: 30_000,
});
