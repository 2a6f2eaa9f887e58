import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { AttemptLog, AttemptLogOutcome, RetryTask, StoredPolicy } from '../domain/task.js';

/**
 * A task as the API shows it.
 *
 * Shown: what the caller asked for and where the task stands (status, attempts, next due time, last error,
 * dead-letter reason), `leaseExpiresAt` (when an IN_FLIGHT task becomes due again if its worker dies) and
 * `cancelRequested` (after a 202 to DELETE).
 *
 * Left out, on purpose: `tenantId` (implied by the caller's credentials), `requestHash` (an internal
 * comparison value), the lease owner, fencing token and version (concurrency internals that a client must
 * not build on), the run bookkeeping (`runAttemptOffset`, `runStartedAt`, `lastDelayMs`) and `traceContext`.
 * Values of credential headers (`Authorization`, `Cookie`, API-key headers) are replaced by `[redacted]`:
 * whoever lists tasks is not necessarily allowed to call the target.
 */
export interface TaskView {
  taskId: string;
  idempotencyKey: string;
  status: TaskStatus;
  targetUrl: string;
  method: string;
  headers: Record<string, string>;
  /** The body as it will be sent, when kept inline. */
  body: string | null;
  /** Where a large body is kept in the blob store (then `body` is null). */
  bodyRef: string | null;
  policyId: string | null;
  policy: RetryPolicy | null;
  /** Attempts made so far, replays included. */
  attemptNumber: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
  leaseExpiresAt: number | null;
  cancelRequested: boolean;
  lastError: string | null;
  lastResponseStatus: number | null;
  deadLetterReason: string | null;
}

/** An attempt as the API shows it (the worker id and tenant are left out). */
export interface AttemptView {
  attemptNumber: number;
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  errorMessage: string | null;
  outcome: AttemptLogOutcome;
  responseBodySnippet: string | null;
  nextAttemptAt: number | null;
}

/** A named policy as the API shows it: the core policy fields plus its id and times. */
export type PolicyView = RetryPolicy & { policyId: string; createdAt: number; updatedAt: number };

/** Header names (lower case) whose values are credentials. */
export const REDACTED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-auth-token',
]);

/** The placeholder shown instead of a credential header's value. */
export const REDACTED = '[redacted]';

/** Copies headers with credential values replaced by {@link REDACTED}. */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = REDACTED_HEADERS.has(name.toLowerCase()) ? REDACTED : value;
  }
  return out;
}

export function toTaskView(task: RetryTask): TaskView {
  return {
    taskId: task.taskId,
    idempotencyKey: task.idempotencyKey,
    status: task.status,
    targetUrl: task.targetUrl,
    method: task.method,
    headers: redactHeaders(task.headers),
    body: task.body,
    bodyRef: task.bodyRef,
    policyId: task.policyId,
    policy: task.policy,
    attemptNumber: task.attemptNumber,
    nextAttemptAt: task.nextAttemptAt,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    leaseExpiresAt: task.leaseExpiresAt,
    cancelRequested: task.cancelRequested,
    lastError: task.lastError,
    lastResponseStatus: task.lastResponseStatus,
    deadLetterReason: task.deadLetterReason,
  };
}

export function toAttemptView(attempt: AttemptLog): AttemptView {
  return {
    attemptNumber: attempt.attemptNumber,
    startedAt: attempt.startedAt,
    durationMs: attempt.durationMs,
    responseStatus: attempt.responseStatus,
    errorMessage: attempt.errorMessage,
    outcome: attempt.outcome,
    responseBodySnippet: attempt.responseBodySnippet,
    nextAttemptAt: attempt.nextAttemptAt,
  };
}

export function toPolicyView(stored: StoredPolicy): PolicyView {
  return { policyId: stored.policyId, ...stored.policy, createdAt: stored.createdAt, updatedAt: stored.updatedAt };
}
