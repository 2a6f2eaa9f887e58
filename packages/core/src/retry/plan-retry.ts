import { computeDelay } from '../backoff/compute-delay.js';
import { scheduleFor } from '../backoff/schedule-for.js';
import type { FailureClass } from '../http/failure-class.js';
import type { RetryPolicy } from '../policy/retry-policy.js';
import type { Random } from '../time/clock.js';

/** Why retrying stopped. */
export const GiveUpReason = {
  /** `maxAttempts` attempts were made. */
  MAX_ATTEMPTS: 'max_attempts',
  /** Less than `estimatedCallMs` of `totalBudgetMs` remains. */
  BUDGET: 'budget',
  /**
   * The downstream asked (Retry-After) for a wait that ends past the budget, or, for a retry a caller waits on
   * ({@link RetryPlanInput.capRetryAfterAtMaxDelay}: `retry()` and the clients built on it), one longer than the
   * schedule's `maxDelayMs`.
   */
  RETRY_AFTER_BEYOND_BUDGET: 'retry_after_beyond_budget',
  /** A shared `RetryBudget` refused the retry. */
  RETRY_BUDGET_DENIED: 'retry_budget_denied',
  /** The circuit breaker is open. */
  CIRCUIT_OPEN: 'circuit_open',
} as const;
export type GiveUpReason = (typeof GiveUpReason)[keyof typeof GiveUpReason];

/** What {@link planRetry} decided after a retryable failure. */
export type RetryPlan =
  | {
      retry: true;
      /** How long to wait before the next attempt (clipped to the budget). */
      delayMs: number;
      /** The delay to remember as `previousDelayMs` for the next decision (DECORRELATED jitter reads it). */
      previousDelayMs: number;
      /** True when the delay came from a Retry-After hint rather than the backoff. */
      hinted: boolean;
    }
  | { retry: false; reason: GiveUpReason };

/** The inputs of one retry decision. */
export interface RetryPlanInput {
  policy: RetryPolicy;
  /** Attempts made so far in this run (>= 1): the next retry is number `attemptsMade`. */
  attemptsMade: number;
  /** Time spent so far against `totalBudgetMs`, in ms: since the call began (library) or the task's run began (service). */
  elapsedMs: number;
  /**
   * The backoff delay chosen before the previous retry (0 before the first), whichever schedule chose it: one value per
   * call or task, not one per failure class.
   */
  previousDelayMs: number;
  /**
   * What kind of failure this was (see `failureClassOf`): picks the schedule from `policy.backoffByClass`
   * ({@link scheduleFor}). Undefined, or a class the policy names no schedule for: the main schedule.
   */
  failureClass?: FailureClass | undefined;
  /** A Retry-After hint from the failure, in ms; replaces the computed delay, with no jitter. */
  retryAfterMs?: number | undefined;
  /**
   * Honour a Retry-After hint only up to the `maxDelayMs` of the failure's schedule (as well as the budget): a longer
   * one gives up (`retry_after_beyond_budget`) rather than wait. For a retry someone waits on, in process (`retry()`):
   * an hour's `Retry-After` there is a request held for an hour. The service, whose tasks wait in its store, leaves it
   * off and honours any hint that fits the budget. Default false.
   */
  capRetryAfterAtMaxDelay?: boolean | undefined;
  random: Random;
}

/**
 * Whether the budget leaves room for one more attempt: true unless `elapsedMs + estimatedCallMs` exceeds
 * `totalBudgetMs`. Policies without a budget always have room.
 */
export function budgetAllowsAttempt(policy: RetryPolicy, elapsedMs: number): boolean {
  if (policy.totalBudgetMs === undefined) return true;
  return elapsedMs + (policy.estimatedCallMs ?? 0) <= policy.totalBudgetMs;
}

/**
 * Decides what follows a retryable failure — the single place where `retry()` and the service's engine
 * turn a policy into "wait this long" or "give up because". Pure.
 *
 * - `maxAttempts` reached → give up (`max_attempts`).
 * - The delay is computed on the failure class's schedule ({@link scheduleFor}) for retry number `attemptsMade`, which
 *   counts every retry of the run whatever its class.
 * - A Retry-After hint replaces the computed delay; if the attempt it leads to would start with less than
 *   `estimatedCallMs` of the budget left, give up now (`retry_after_beyond_budget`) instead of sleeping past
 *   the deadline. With `capRetryAfterAtMaxDelay`, so does a hint longer than the schedule's `maxDelayMs`.
 * - Otherwise the backoff delay is clipped so the next attempt starts no later than
 *   `totalBudgetMs − estimatedCallMs`; when that moment has already passed, give up (`budget`).
 *
 * @example
 * ```ts
 * planRetry({ policy, attemptsMade: 1, elapsedMs: 12, previousDelayMs: 0, random: Math.random });
 * // { retry: true, delayMs: 73.2, previousDelayMs: 73.2, hinted: false }
 * ```
 */
export function planRetry(input: RetryPlanInput): RetryPlan {
  const { policy, attemptsMade, elapsedMs, previousDelayMs, retryAfterMs, random, failureClass } = input;
  if (attemptsMade >= policy.maxAttempts) return { retry: false, reason: GiveUpReason.MAX_ATTEMPTS };

  const hinted = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0;
  const beyondMaxDelay = hinted && input.capRetryAfterAtMaxDelay === true && retryAfterMs > scheduleFor(policy, failureClass).maxDelayMs;
  const computed = hinted ? retryAfterMs : computeDelay(scheduleFor(policy, failureClass), attemptsMade, previousDelayMs, random);
  if (policy.totalBudgetMs === undefined) {
    if (beyondMaxDelay) return { retry: false, reason: GiveUpReason.RETRY_AFTER_BEYOND_BUDGET };
    return { retry: true, delayMs: computed, previousDelayMs: hinted ? previousDelayMs : computed, hinted };
  }

  const latestStart = policy.totalBudgetMs - (policy.estimatedCallMs ?? 0);
  const remaining = latestStart - elapsedMs;
  if (remaining < 0) return { retry: false, reason: GiveUpReason.BUDGET };
  if (hinted && (computed > remaining || beyondMaxDelay)) return { retry: false, reason: GiveUpReason.RETRY_AFTER_BEYOND_BUDGET };
  const delayMs = Math.min(computed, remaining);
  return { retry: true, delayMs, previousDelayMs: hinted ? previousDelayMs : computed, hinted };
}
