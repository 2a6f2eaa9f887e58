/**
 * Why a transactional enqueue (`@retryd/server/pg`) could not use the caller's transaction or retryd's schema. A task
 * that breaks a rule is a `RetrydError` instead, with the code the API answers with (`VALIDATION_FAILED`, ...).
 */
export const CALLER_TRANSACTION_CODES = Object.freeze({
  /** The client is not inside a transaction: `BEGIN` was not sent, or the transaction already ended. */
  NOT_IN_TRANSACTION: 'NOT_IN_TRANSACTION',
  /** A statement of the caller's before the enqueue failed: the transaction can only be rolled back. */
  TRANSACTION_ABORTED: 'TRANSACTION_ABORTED',
  /** Another enqueue is still running on the same client: one at a time per connection. */
  CLIENT_BUSY: 'CLIENT_BUSY',
  /** retryd's schema does not exist, or lacks migrations this build writes for: run `retryd migrate` once. */
  SCHEMA_NOT_MIGRATED: 'SCHEMA_NOT_MIGRATED',
  /** retryd's schema was migrated by a newer retryd than this build: upgrade `@retryd/server` in the application. */
  SCHEMA_TOO_NEW: 'SCHEMA_TOO_NEW',
  /**
   * PostgreSQL gave up the transaction for another's sake (a deadlock, or a serialization failure under REPEATABLE
   * READ or SERIALIZABLE when a concurrent transaction committed the same idempotency key): retry the transaction.
   */
  TRANSACTION_CONFLICT: 'TRANSACTION_CONFLICT',
  /** `lock_timeout` or `statement_timeout` ended the insert while it waited for a concurrent transaction's lock. */
  LOCK_TIMEOUT: 'LOCK_TIMEOUT',
} as const);

/** One of {@link CALLER_TRANSACTION_CODES}. */
export type CallerTransactionCode = keyof typeof CALLER_TRANSACTION_CODES;

/**
 * Thrown by the transactional enqueue when the caller's transaction or retryd's schema does not allow it. Nothing was
 * written: the enqueue's own statements are rolled back to its savepoint, so the transaction goes on (except after
 * `TRANSACTION_ABORTED`, which was so before the call, and `TRANSACTION_CONFLICT`, which asks to retry it whole).
 * The driver's error, if any, is the `cause`.
 *
 * @example
 * ```ts
 * try { await enqueuer.enqueue(client, task); }
 * catch (error) { if (error instanceof CallerTransactionError && error.code === 'TRANSACTION_CONFLICT') retry(); }
 * ```
 */
export class CallerTransactionError extends Error {
  override readonly name = 'CallerTransactionError';

  constructor(
    readonly code: CallerTransactionCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
