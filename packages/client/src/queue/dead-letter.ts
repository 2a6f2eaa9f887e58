import type { GiveUpReason } from '@retryd/core';
import type { QueuedCall } from './queued-call.js';

/** Why a call left the queue without success. */
export const DeadLetterReason = {
  /** The server answered a status that retrying will not change (a 400, a 404, …). */
  PERMANENT_STATUS: 'permanent_status',
  /** The attempt threw an error that is not worth retrying. */
  NON_RETRYABLE_ERROR: 'non_retryable_error',
} as const;
export type DeadLetterReason = (typeof DeadLetterReason)[keyof typeof DeadLetterReason] | GiveUpReason;

/** What a queue hands to `onDeadLetter`. */
export interface DeadLetter {
  call: QueuedCall;
  /** A {@link DeadLetterReason}, or core's give-up reason (`max_attempts`, `budget`, `retry_after_beyond_budget`). */
  reason: DeadLetterReason;
  /** The last response, when the last attempt got one. */
  response?: Response;
  /** The last error, when the last attempt threw. */
  error?: unknown;
}
