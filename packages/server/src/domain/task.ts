import type { RetryPolicy, TaskStatus } from '@retryd/core';

/** The tenant every record belongs to until API keys bring real tenants. */
export const DEFAULT_TENANT = 'default';

/**
 * A call that retryd makes on a service's behalf until it succeeds or its policy gives up.
 * Times are epoch milliseconds. Exactly one of `policyId` and `policy` is set.
 */
export interface RetryTask {
  tenantId: string;
  /** UUID, chosen by the service at enqueue. */
  taskId: string;
  /** Sent as `Idempotency-Key` on every attempt; never changes, not even on replay. */
  idempotencyKey: string;
  /** SHA-256 of the enqueue request's canonical form: tells a replayed enqueue from a conflicting one. */
  requestHash: string;
  targetUrl: string;
  method: string;
  headers: Record<string, string>;
  /** The body sent as is, when small enough to keep inline. */
  body: string | null;
  /** Where a large body lives in the blob store (then `body` is null). */
  bodyRef: string | null;
  /** A named policy, read afresh at each scheduling decision (a `PUT` changes future scheduling). */
  policyId: string | null;
  /** An inline policy, fixed at enqueue. */
  policy: RetryPolicy | null;
  status: TaskStatus;
  /** Attempts made so far, over the task's whole life (replays included). */
  attemptNumber: number;
  /** `attemptNumber` when the current run began: 0, or its value at the last replay. A run gets `maxAttempts` attempts. */
  runAttemptOffset: number;
  /** Start of the first attempt of the current run: the origin of `totalBudgetMs`. Null before it. */
  runStartedAt: number | null;
  /** The delay chosen before the latest retry (DECORRELATED jitter reads it). */
  lastDelayMs: number;
  /** When the task is due (PENDING), or null once it no longer will be. */
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
  /** Owner of the current lease (IN_FLIGHT only). */
  leaseOwner: string | null;
  /** When the current lease lapses (IN_FLIGHT only); after that the task is due again. */
  leaseExpiresAt: number | null;
  /** Raised by every claim; a completion must present the value it was claimed with. */
  fencingToken: number;
  /** Raised by every change; the optimistic check of `updateTask`. */
  version: number;
  /** A cancel arrived while an attempt was in flight: the task is cancelled when that attempt ends. */
  cancelRequested: boolean;
  lastError: string | null;
  lastResponseStatus: number | null;
  /** Why a FAILED or EXHAUSTED task died. */
  deadLetterReason: string | null;
  /** W3C `traceparent` of the enqueue request, carried to every attempt (tracing arrives later). */
  traceContext: string | null;
}

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
}

/** A registered, named policy. */
export interface StoredPolicy {
  tenantId: string;
  policyId: string;
  policy: RetryPolicy;
  createdAt: number;
  updatedAt: number;
  version: number;
}

/** One page of a listing; `nextCursor` is absent on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
