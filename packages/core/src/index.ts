/**
 * `@retryd/core`: correct retries for calls between services, with no dependencies.
 *
 * - {@link retry} with exponential, linear or fixed backoff; full, equal or decorrelated jitter; a schedule of its own
 *   for 429s, 5xx, timeouts and refused connections; attempts and a total budget that aborts a late attempt;
 *   Retry-After; abort; a circuit breaker and a retry budget.
 * - Policies are plain data ({@link RetryPolicy}), checked by {@link validatePolicy}; the delay math
 *   ({@link computeDelay}, {@link planRetry}) is pure.
 * - The task lifecycle state machine, HTTP classification and idempotency keys shared with the retryd service.
 *
 * Test helpers (`ManualClock`, `seededRandom`) live in `@retryd/core/testing`.
 * @packageDocumentation
 */
export {
  BackoffType,
  JitterType,
  DEFAULT_POLICY,
  DEFAULT_RETRYABLE_STATUS_CODES,
  retryableStatusCodesOf,
  retryableGrpcCodesOf,
  retryableStatusKindOf,
  successStatusCodesOf,
  type BackoffByClass,
  type BackoffSchedule,
  type RetryPolicy,
} from './policy/retry-policy.js';
export {
  validatePolicy,
  assertValidPolicy,
  InvalidPolicyError,
  MAX_ATTEMPTS_LIMIT,
  MAX_POLICY_MS,
  BACKOFF_SCHEDULE_FIELDS,
  RETRY_POLICY_FIELDS,
  type PolicyValidation,
  type PolicyViolation,
} from './policy/validate-policy.js';
export { computeDelay, baseDelay } from './backoff/compute-delay.js';
export { scheduleFor } from './backoff/schedule-for.js';
export { systemClock, type Clock, type Random } from './time/clock.js';
export { setLongTimer, clearLongTimer, MAX_TIMER_MS } from './time/long-timer.js';

export { retry, AttemptOutcome, type AttemptContext, type AttemptEvent, type RetryOptions } from './retry/retry.js';
export { planRetry, budgetAllowsAttempt, GiveUpReason, type RetryPlan, type RetryPlanInput } from './retry/plan-retry.js';
export { RetryExhaustedError, RetryableResultError } from './retry/retry-errors.js';
export { isRetryableError, isAbortError } from './retry/default-retryable.js';
export { retryAfterHint } from './retry/retry-after-hint.js';
export { parseRetryAfter } from './retry-after/parse-retry-after.js';

export * from './breaker/index.js';
export * from './budget/index.js';
export * from './http/index.js';
export {
  GrpcStatus,
  DEFAULT_RETRYABLE_GRPC_CODES,
  isGrpcStatusName,
  grpcStatusName,
  failureClassOfGrpcStatus,
  parseGrpcPushback,
  type GrpcStatusName,
  type GrpcFailureName,
} from './grpc/grpc-status.js';
export * from './lifecycle/index.js';
export { deriveIdempotencyKey, type IdempotencyKeyInput } from './idempotency/derive-idempotency-key.js';
export { canonicalJson } from './idempotency/canonical-json.js';
