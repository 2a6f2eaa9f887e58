import { GiveUpReason } from '@retryd/core';

/**
 * Why a task was dead-lettered: core's {@link GiveUpReason} values (`max_attempts`, `budget`,
 * `retry_after_beyond_budget`, …), `retry_after_beyond_limit` for a `Retry-After` longer than the service allows
 * (`DecisionContext.maxRetryAfterMs`), `permanent_status:<code>` for a status that is not retried (3xx included),
 * `target_blocked` for a target whose address the dispatcher refused to connect to (a blocked range not covered by
 * `--allow-targets`; error code `TARGET_BLOCKED`), `permanent_status:<CODE_NAME>` for a gRPC code that is not retried
 * (`permanent_status:INVALID_ARGUMENT`), `retry_refused` for a gRPC target that asked for no retry, `secret_unavailable` for a secret that could not be revealed at
 * dispatch, and `permanent_error` for any other error that is neither a network failure nor a timeout. Stores keep
 * the reason as text: a new one needs no migration.
 */
export const DeadLetterReason = {
  MAX_ATTEMPTS: GiveUpReason.MAX_ATTEMPTS,
  BUDGET: GiveUpReason.BUDGET,
  RETRY_AFTER_BEYOND_BUDGET: GiveUpReason.RETRY_AFTER_BEYOND_BUDGET,
  /**
   * The downstream's `Retry-After` asked for a longer wait than the service honours (`--max-retry-after`, or the
   * policy's own `maxDelayMs` for that failure when longer): dead-lettered at once rather than parked for it.
   */
  RETRY_AFTER_BEYOND_LIMIT: 'retry_after_beyond_limit',
  PERMANENT_ERROR: 'permanent_error',
  /** A secret of the task could not be revealed at dispatch (unknown name, key not configured): no request was sent. */
  SECRET_UNAVAILABLE: 'secret_unavailable',
  TARGET_BLOCKED: 'target_blocked',
  /**
   * A gRPC target answered a retryable code with a negative (or unreadable) `grpc-retry-pushback-ms`: it asks not to
   * be retried, and is not.
   */
  RETRY_REFUSED: 'retry_refused',
} as const;

/** The dead-letter reason of a response whose status is neither 2xx nor retryable, e.g. `permanent_status:400`. */
export function permanentStatusReason(status: number): string {
  return `permanent_status:${status}`;
}
