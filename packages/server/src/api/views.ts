import type { RetryPolicy } from '@retryd/core';
import type { AttemptLog, AttemptLogOutcome, RetryDelayReason, RetryTask, StoredPolicy } from '../domain/task.js';
import { toTaskSummaryView as generatedToTaskSummaryView, toTaskView as generatedToTaskView } from './generated/task-views.js';
import { TASK_VIEW_FIELD_NAMES, type TaskViewFieldName } from '../domain/task-fields.js';
import { REDACTED, redactHeaders } from '../secrets/redaction.js';
import { shownCallback } from './shown-values.js';
import type { BreakerView, TargetStatus } from '../protection/target-control.js';
import type { TargetSettings } from '../protection/target-settings.js';
import type { TargetLimits } from '../store/store.js';

/**
 * A task as the API shows it: the fields of `TASK_FIELDS` that carry an `api` entry, every one always present.
 *
 * Shown: what the caller asked for and where the task stands (status, attempts, next due time, last error,
 * dead-letter reason), its target, `leaseExpiresAt` (when an IN_FLIGHT task becomes due again if its worker dies)
 * and `cancelRequested` (after a 202 to DELETE).
 *
 * Left out, on purpose: `tenantId` (implied by the caller's credentials), `requestHash` (an internal comparison
 * value), the lease owner, fencing token and version (concurrency internals that a client must not build on), the
 * run bookkeeping (`runAttemptOffset`, `runStartedAt`, `lastDelayMs`) and `traceContext`.
 *
 * Secrets are never shown (whoever lists tasks is not necessarily allowed to call the target): values of credential
 * headers (names holding auth, token, key, secret, password, session, cookie, signature or credential: see
 * `isCredentialHeader`) and of headers the task marked secret are `[REDACTED]`, so is a sensitive body, and each query value of `targetUrl` is `REDACTED` (see
 * `redactUrlQuery`). The task keeps its real URL for dispatch.
 */
export type TaskView = Pick<RetryTask, TaskViewFieldName>;

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
  /** Why `nextAttemptAt` is later than the retry's backoff said (`retry_budget`), or null: it is not. */
  delayedBy: RetryDelayReason | null;
  /** When the backoff alone would have run the retry, when `delayedBy` says it was delayed; else null. */
  backoffAt: number | null;
}

/** A named policy as the API shows it: the core policy fields plus its id and times. */
export type PolicyView = RetryPolicy & { policyId: string; callback: StoredPolicy['callback']; createdAt: number; updatedAt: number };

/**
 * A target as the API shows it (the `Target` schema): the store's view of its gate (`heldUntil`, `throttledUntil`,
 * `nextDueAt`, `inFlight`, `dueTasks`, and the `limits` claims obey now), its breaker, the rate adaptive throttling
 * allows, and its settings. The tenant is left out, as on every view: it is implied by the caller.
 */
export interface TargetApiView {
  targetKey: string;
  heldUntil: number | null;
  throttledUntil: number | null;
  nextDueAt: number | null;
  inFlight: number;
  dueTasks: number;
  limits: TargetLimits;
  breaker: BreakerView;
  allowedRatePerSecond: number | null;
  settings: TargetSettings;
}

export { REDACTED, redactHeaders };

/**
 * The API view of a task (see {@link TaskView}), secrets redacted: generated from the field
 * definitions as one object literal (generated/task-views.ts, written by view-mapper-source.ts), since a page of
 * tasks maps up to 1,000. How secrets are shown: shown-values.ts.
 */
export const toTaskView: (task: RetryTask) => TaskView = generatedToTaskView;

/**
 * A task as listings show it (the `TaskSummary` schema): {@link TaskView} without `body`, which only the task's own
 * route shows. A body kept inline may be 64 KiB: a page of a thousand tasks with theirs ran to tens of MiB.
 */
export type TaskSummaryView = Omit<TaskView, 'body'>;

/** The fields of {@link TaskSummaryView}, in the order of the task's fields. */
export const TASK_SUMMARY_FIELD_NAMES: readonly Exclude<TaskViewFieldName, 'body'>[] = Object.freeze(
  TASK_VIEW_FIELD_NAMES.filter((name): name is Exclude<TaskViewFieldName, 'body'> => name !== 'body'),
);

/** The listing view of a task (see {@link TaskSummaryView}), secrets redacted as in {@link toTaskView}; generated the same way. */
export const toTaskSummaryView: (task: RetryTask) => TaskSummaryView = generatedToTaskSummaryView;

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
    delayedBy: attempt.delayedBy,
    backoffAt: attempt.backoffAt,
  };
}

export function toPolicyView(stored: StoredPolicy): PolicyView {
  return {
    policyId: stored.policyId,
    ...stored.policy,
    callback: shownCallback(stored.callback),
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  };
}

/** The API view of a target's status (see {@link TargetApiView}): the store's limits gathered under `limits`. */
export function toTargetView(status: TargetStatus): TargetApiView {
  const { target } = status;
  return {
    targetKey: target.targetKey,
    heldUntil: target.heldUntil,
    throttledUntil: target.throttledUntil,
    nextDueAt: target.nextDueAt,
    inFlight: target.inFlight,
    dueTasks: target.dueTasks,
    limits: { ratePerSecond: target.ratePerSecond, burst: target.burst, maxInFlight: target.maxInFlight },
    breaker: { state: status.breaker.state, openUntil: status.breaker.openUntil, reopenCount: status.breaker.reopenCount },
    allowedRatePerSecond: status.allowedRatePerSecond,
    settings: status.settings,
  };
}
