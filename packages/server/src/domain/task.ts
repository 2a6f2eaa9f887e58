import type { RetryPolicy } from '@retryd/core';
import type { TaskCallback } from './task-callback.js';

/** The tenant every record belongs to until API keys bring real tenants. */
export const DEFAULT_TENANT = 'default';

export type { RetryTask } from './task-fields.js';

/** The outcome an attempt log entry records. */
export const AttemptLogOutcome = {
  SUCCEEDED: 'succeeded',
  RETRY_SCHEDULED: 'retry_scheduled',
  FAILED: 'failed',
  EXHAUSTED: 'exhausted',
  CANCELLED: 'cancelled',
  /** The worker's lease lapsed before it reported: the attempt counts, its result is unknown. */
  LEASE_EXPIRED: 'lease_expired',
} as const;
export type AttemptLogOutcome = (typeof AttemptLogOutcome)[keyof typeof AttemptLogOutcome];

/**
 * Why a retry was scheduled later than its backoff said, as its attempt log entry records it (`AttemptLog.delayedBy`).
 * Only a real delay is recorded: a move earlier (a breaker's hold keeps a retry's place in line a ms ahead of its own
 * due time) is not one.
 */
export const RetryDelayReasons = {
  /**
   * Its target's retry budget was spent: the retry took the next slot of the budget's pacer (`retryBudget` in
   * protection/target-settings.ts). The budget is per instance and in memory, so this entry is the only place it is said.
   */
  RETRY_BUDGET: 'retry_budget',
} as const;
export type RetryDelayReason = (typeof RetryDelayReasons)[keyof typeof RetryDelayReasons];

/** One attempt, as recorded in the same transaction as the task change it led to. */
export interface AttemptLog {
  tenantId: string;
  taskId: string;
  /** 1-based over the task's life; unique per task (no attempt is recorded twice). */
  attemptNumber: number;
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  errorMessage: string | null;
  outcome: AttemptLogOutcome;
  /** The first 4 KiB of the response body. */
  responseBodySnippet: string | null;
  /** When the task was scheduled next because of this attempt (null if it was the last). */
  nextAttemptAt: number | null;
  workerId: string;
  /**
   * Why `nextAttemptAt` is later than the retry's backoff said, or null (almost always): it is not, or no retry follows.
   */
  delayedBy: RetryDelayReason | null;
  /** When backoff alone would have run the retry (epoch ms), when `delayedBy` says it was delayed; else null. */
  backoffAt: number | null;
}

/** A registered, named policy. */
export interface StoredPolicy {
  tenantId: string;
  policyId: string;
  policy: RetryPolicy;
  /**
   * The callback given to each task enqueued under this policy that names none of its own (copied at enqueue: a
   * change reaches the tasks enqueued after it), or null.
   */
  callback: TaskCallback | null;
  createdAt: number;
  updatedAt: number;
  version: number;
}

/** One page of a listing; `nextCursor` is absent on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
