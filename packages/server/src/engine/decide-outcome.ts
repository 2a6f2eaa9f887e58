import {
  budgetAllowsAttempt,
  classifyError,
  classifyHttpResponse,
  failureClassOfError,
  failureClassOfStatus,
  HttpOutcome,
  planRetry,
  retryableStatusCodesOf,
  scheduleFor,
  successStatusCodesOf,
  TaskEvent,
  transition,
  type FailureClass,
  type Random,
  type RetryPolicy,
  type TaskStatus,
} from '@retryd/core';
import { DeadLetterReason, permanentStatusReason } from '../domain/dead-letter-reason.js';
import { AttemptLogOutcome, type AttemptLog, type RetryTask } from '../domain/task.js';
import { expiresAtOf, type RetentionPeriods } from '../retention/retention-periods.js';
import { isTargetBlocked } from '../security/guarded-connector.js';
import type { AttemptCompletion, TaskOutcome } from '../store/store.js';
import type { AttemptResult } from './attempt-result.js';
import { grpcVerdict } from './grpc-verdict.js';

/** What every decision needs besides the task. */
export interface DecisionContext {
  /** The task's policy, resolved now (a named policy as it stands at this decision). */
  policy: RetryPolicy;
  /** Epoch ms: the end of the attempt, the moment of the decision. */
  now: number;
  random: Random;
  /** Recorded in the attempt log. */
  workerId: string;
  /** How long the task is kept once it ends (its tenant's and policy's retention): a final outcome's `expiresAt`. */
  retention: Readonly<RetentionPeriods>;
  /**
   * The longest `Retry-After` honoured, in ms, unless the failure's schedule's `maxDelayMs` is longer (then that): a
   * longer one ends the task (`retry_after_beyond_limit`). Absent: any that fits the budget.
   */
  maxRetryAfterMs?: number | undefined;
}

/** An attempt as the worker saw it: when it started and what came back. */
export interface FinishedAttempt {
  /** Epoch ms, whole. */
  startedAt: number;
  /** How long it took, in ms, measured as precisely as the clock allows. Default `now - startedAt`. */
  durationMs?: number;
  result: AttemptResult;
}

type Verdict = {
  outcome: HttpOutcome;
  /** For a permanent error: its dead-letter reason when it is not `permanent_error` (an error result may name it). */
  reason?: string | undefined;
  /** For a retryable outcome: which of the policy's `backoffByClass` schedules the retry follows, if any. */
  failureClass?: FailureClass | undefined;
  retryAfterMs?: number;
  responseStatus: number | null;
  errorMessage: string | null;
  snippet: string | null;
};

function verdictOf(result: AttemptResult, policy: RetryPolicy, now: number): Verdict {
  if (result.kind === 'error') {
    if (result.deadLetterReason !== undefined) {
      return { outcome: HttpOutcome.PERMANENT, reason: result.deadLetterReason, responseStatus: null, errorMessage: result.message, snippet: null };
    }
    // Before classifyError: a refused address is never retried, whatever else the error chain holds.
    if (isTargetBlocked(result.error)) {
      return { outcome: HttpOutcome.PERMANENT, reason: DeadLetterReason.TARGET_BLOCKED, responseStatus: null, errorMessage: result.message, snippet: null };
    }
    const outcome = classifyError(result.error);
    const verdict: Verdict = { outcome, responseStatus: null, errorMessage: result.message, snippet: null };
    if (outcome === HttpOutcome.RETRYABLE && policy.backoffByClass !== undefined) verdict.failureClass = failureClassOfError(result.error);
    return verdict;
  }
  if (result.kind === 'grpc') {
    const grpc = grpcVerdict(result, policy);
    return { ...grpc, responseStatus: null };
  }
  const classified = classifyHttpResponse(
    { status: result.status, headers: result.headers },
    { retryableStatusCodes: retryableStatusCodesOf(policy), successStatusCodes: successStatusCodesOf(policy), nowMs: now },
  );
  const verdict: Verdict = {
    outcome: classified.outcome,
    responseStatus: result.status,
    errorMessage: classified.outcome === HttpOutcome.SUCCESS ? null : `HTTP ${result.status}`,
    snippet: result.bodySnippet,
  };
  if (classified.retryAfterMs !== undefined) verdict.retryAfterMs = classified.retryAfterMs;
  if (classified.outcome === HttpOutcome.RETRYABLE) verdict.failureClass = failureClassOfStatus(result.status);
  return verdict;
}

/** What every outcome of an attempt shares; the decision adds status, due time, delay and reason. */
interface OutcomeBase {
  attemptNumber: number;
  runStartedAt: number | null;
  lastError: string | null;
  lastResponseStatus: number | null;
}

// Always built as one literal in one field order: a fixed shape keeps this hot path monomorphic (object spread
// here measured ~100x slower, enough to show in W1's attempts/s).
function outcomeOf(
  base: OutcomeBase,
  status: TaskStatus,
  nextAttemptAt: number | null,
  lastDelayMs: number,
  deadLetterReason: string | null,
): TaskOutcome {
  return {
    status,
    attemptNumber: base.attemptNumber,
    nextAttemptAt,
    runStartedAt: base.runStartedAt,
    lastDelayMs,
    lastError: base.lastError,
    lastResponseStatus: base.lastResponseStatus,
    deadLetterReason,
    expiresAt: null,
  };
}

/** Sets a final outcome's `expiresAt`: `now` plus the retention of how it ended (a live one keeps null). */
function expiring(outcome: TaskOutcome, now: number, retention: Readonly<RetentionPeriods>): TaskOutcome {
  outcome.expiresAt = expiresAtOf(outcome.status, now, retention);
  return outcome;
}

// The CANCELLED alternative the store applies instead of `next` if a cancel was requested during the attempt:
// a request already on the wire cannot be recalled, so the cancel takes effect when its attempt ends.
function cancelledInstead(task: RetryTask, next: TaskOutcome, now: number, retention: Readonly<RetentionPeriods>): TaskOutcome {
  return expiring(outcomeOf(next, transition(task.status, TaskEvent.CANCEL), null, next.lastDelayMs, null), now, retention);
}

// With the cancel alternative goes its own log entry: the attempt led to no retry, so it must not say
// `retry_scheduled` with a next time. A lapsed lease keeps `lease_expired` (its result is unknown either way).
function withCancel(task: RetryTask, completion: AttemptCompletion, now: number, retention: Readonly<RetentionPeriods>): AttemptCompletion {
  completion.ifCancelRequested = cancelledInstead(task, completion.next, now, retention);
  const { attempt } = completion;
  if (attempt !== undefined) {
    completion.attemptIfCancelRequested = {
      tenantId: attempt.tenantId,
      taskId: attempt.taskId,
      attemptNumber: attempt.attemptNumber,
      startedAt: attempt.startedAt,
      durationMs: attempt.durationMs,
      responseStatus: attempt.responseStatus,
      errorMessage: attempt.errorMessage,
      outcome: attempt.outcome === AttemptLogOutcome.LEASE_EXPIRED ? AttemptLogOutcome.LEASE_EXPIRED : AttemptLogOutcome.CANCELLED,
      responseBodySnippet: attempt.responseBodySnippet,
      nextAttemptAt: null,
      workerId: attempt.workerId,
      delayedBy: null,
      backoffAt: null,
    };
  }
  return completion;
}

/**
 * What follows a retryable failure: the next attempt (`event`, usually `retry`) or exhaustion. The budget counts from
 * `base.runStartedAt` (the task's creation or replay); the delay follows the failure class's schedule, if the policy
 * gives it one.
 */
function retryOrExhaust(
  task: RetryTask,
  base: OutcomeBase,
  event: typeof TaskEvent.RETRY | typeof TaskEvent.LEASE_EXPIRED,
  retryAfterMs: number | undefined,
  failureClass: FailureClass | undefined,
  ctx: DecisionContext,
): TaskOutcome {
  const attemptsMade = base.attemptNumber - task.runAttemptOffset;
  const plan = planRetry({
    policy: ctx.policy,
    attemptsMade,
    elapsedMs: ctx.now - (base.runStartedAt ?? ctx.now),
    // A replayed run starts its backoff afresh, whatever delay the previous run ended on. One previous delay per task,
    // whichever class's schedule chose it (see `RetryPolicy.backoffByClass`).
    previousDelayMs: attemptsMade <= 1 ? 0 : task.lastDelayMs,
    retryAfterMs,
    random: ctx.random,
    failureClass,
  });
  if (plan.retry) {
    const limit = plan.hinted && ctx.maxRetryAfterMs !== undefined ? retryAfterLimit(ctx.maxRetryAfterMs, ctx.policy, failureClass) : Infinity;
    if (plan.delayMs > limit) {
      // A wait no policy of the task's would make (a `Retry-After: 999999999` parked a task for decades): ended now,
      // with the reason and the numbers, for an operator to replay or a tenant to see.
      const lastError = `${base.lastError ?? 'Retry-After'}: Retry-After asked for ${seconds(plan.delayMs)} s, more than the ${seconds(limit)} s allowed`;
      const ended: OutcomeBase = { attemptNumber: base.attemptNumber, runStartedAt: base.runStartedAt, lastError, lastResponseStatus: base.lastResponseStatus };
      return outcomeOf(ended, transition(task.status, TaskEvent.EXHAUST), null, task.lastDelayMs, DeadLetterReason.RETRY_AFTER_BEYOND_LIMIT);
    }
    // Whole ms, rounded up: never earlier than the backoff (or the server's Retry-After) asked for.
    return outcomeOf(base, transition(task.status, event), Math.ceil(ctx.now + plan.delayMs), plan.previousDelayMs, null);
  }
  return outcomeOf(base, transition(task.status, TaskEvent.EXHAUST), null, task.lastDelayMs, plan.reason);
}

/** The longest `Retry-After` a task honours: the service's limit, or its failure's schedule's `maxDelayMs` when longer. */
export function retryAfterLimit(maxRetryAfterMs: number, policy: RetryPolicy, failureClass: FailureClass | undefined): number {
  return Math.max(maxRetryAfterMs, scheduleFor(policy, failureClass).maxDelayMs);
}

function seconds(ms: number): string {
  return String(Math.ceil(ms / 1000));
}

function logOutcome(next: TaskOutcome): AttemptLogOutcome {
  switch (next.status) {
    case 'SUCCEEDED':
      return AttemptLogOutcome.SUCCEEDED;
    case 'FAILED':
      return AttemptLogOutcome.FAILED;
    case 'EXHAUSTED':
      return AttemptLogOutcome.EXHAUSTED;
    default:
      return AttemptLogOutcome.RETRY_SCHEDULED;
  }
}

/**
 * The end of an attempt on a claimed (IN_FLIGHT) task: the attempt log entry and the task's next state, all moves
 * through the core lifecycle. Pure.
 *
 * - 2xx → SUCCEEDED (even if a cancel was requested meanwhile: the call did happen).
 * - A status in the policy's `retryableStatusCodes`, a network error or a timeout → PENDING at
 *   `now + delay` (Retry-After honoured; the delay on the schedule the policy's `backoffByClass` gives a 429, a 5xx, a
 *   timeout or a refused connection, else its main one), or EXHAUSTED when {@link planRetry} gives up
 *   (`max_attempts`, `budget`, `retry_after_beyond_budget`).
 * - A gRPC status is read by {@link grpcVerdict}: OK succeeds, the policy's gRPC codes retry (after
 *   `grpc-retry-pushback-ms`, under the same `maxRetryAfterMs` as a Retry-After), any other code is FAILED
 *   (`permanent_status:<CODE_NAME>`); its attempt log has no response status and `grpc <CODE_NAME>: <message>` as error.
 * - Any other status, 3xx included → FAILED (`permanent_status:<code>`); a connection the target guard refused →
 *   FAILED (`target_blocked`); any other error → FAILED (`permanent_error`).
 * - Unless it succeeded, `ifCancelRequested` makes it CANCELLED if a cancel arrived during the attempt, and then
 *   `attemptIfCancelRequested` is logged: outcome `cancelled`, no next time.
 *
 * Attempts are counted per run (`attemptNumber - runAttemptOffset`); the run's budget counts from `runStartedAt`, its
 * creation or its replay, so time spent queued, held or waiting on Retry-After counts as much as time in attempts.
 *
 * @example
 * ```ts
 * const completion = decideAttemptOutcome(task, { startedAt, result }, { policy, now: clock.now(), random, workerId });
 * await store.completeAttempts([completion], now);
 * ```
 */
export function decideAttemptOutcome(task: RetryTask, attempt: FinishedAttempt, ctx: DecisionContext): AttemptCompletion {
  const verdict = verdictOf(attempt.result, ctx.policy, ctx.now);
  const base: OutcomeBase = {
    attemptNumber: task.attemptNumber + 1,
    // Null only for a task an older version enqueued and never tried: its budget counts from this attempt, as it did then.
    runStartedAt: task.runStartedAt ?? attempt.startedAt,
    lastError: verdict.errorMessage,
    lastResponseStatus: verdict.responseStatus,
  };
  let next: TaskOutcome;
  if (verdict.outcome === HttpOutcome.SUCCESS) {
    next = outcomeOf(base, transition(task.status, TaskEvent.SUCCEED), null, task.lastDelayMs, null);
  } else if (verdict.outcome === HttpOutcome.PERMANENT) {
    const reason =
      verdict.responseStatus === null ? (verdict.reason ?? DeadLetterReason.PERMANENT_ERROR) : permanentStatusReason(verdict.responseStatus);
    next = outcomeOf(base, transition(task.status, TaskEvent.FAIL), null, task.lastDelayMs, reason);
  } else {
    next = retryOrExhaust(task, base, TaskEvent.RETRY, verdict.retryAfterMs, verdict.failureClass, ctx);
  }
  expiring(next, ctx.now, ctx.retention);
  const log: AttemptLog = {
    tenantId: task.tenantId,
    taskId: task.taskId,
    attemptNumber: base.attemptNumber,
    startedAt: attempt.startedAt,
    durationMs: Math.max(0, attempt.durationMs ?? ctx.now - attempt.startedAt),
    responseStatus: verdict.responseStatus,
    errorMessage: verdict.errorMessage,
    outcome: logOutcome(next),
    responseBodySnippet: verdict.snippet,
    nextAttemptAt: next.nextAttemptAt,
    workerId: ctx.workerId,
    // Protection's verdict, applied after this decision, may delay the retry and say why (apply-verdict.ts).
    delayedBy: null,
    backoffAt: null,
  };
  const completion: AttemptCompletion = {
    tenantId: task.tenantId,
    taskId: task.taskId,
    fencingToken: task.fencingToken,
    attempt: log,
    next,
  };
  return next.status === 'SUCCEEDED' ? completion : withCancel(task, completion, ctx.now, ctx.retention);
}

/**
 * Checks a freshly claimed task before any request is sent, and returns the change to make instead of an attempt,
 * or null to go ahead. Pure. No attempt is logged or counted.
 *
 * - A cancel was requested (it arrived while an earlier lease was handed back) → CANCELLED.
 * - The run already made `maxAttempts` attempts (a `PUT` lowered the limit) → EXHAUSTED (`max_attempts`).
 * - The budget, counted from `runStartedAt` (the task's creation or replay), has no room for the call
 *   (`budgetAllowsAttempt` is false) → EXHAUSTED (`budget`): a task whose budget ran out while it waited for its first
 *   attempt (a long `delayMs`, a held target) ends so without making one.
 */
export function decideBeforeAttempt(task: RetryTask, policy: RetryPolicy, now: number, retention: Readonly<RetentionPeriods>): AttemptCompletion | null {
  let status: TaskStatus;
  let reason: string | null = null;
  if (task.cancelRequested) {
    status = transition(task.status, TaskEvent.CANCEL);
  } else if (task.attemptNumber - task.runAttemptOffset >= policy.maxAttempts) {
    status = transition(task.status, TaskEvent.EXHAUST);
    reason = DeadLetterReason.MAX_ATTEMPTS;
  } else if (!budgetAllowsAttempt(policy, now - (task.runStartedAt ?? now))) {
    status = transition(task.status, TaskEvent.EXHAUST);
    reason = DeadLetterReason.BUDGET;
  } else {
    return null;
  }
  const next = expiring(outcomeOf(task, status, null, task.lastDelayMs, reason), now, retention);
  const completion: AttemptCompletion = { tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, next };
  return status === 'CANCELLED' ? completion : withCancel(task, completion, now, retention);
}

/**
 * The change for an IN_FLIGHT task whose lease lapsed with no report (its worker crashed or stalled). Pure.
 * The lost attempt counts — it may well have reached the server, which is what the idempotency key is for — and is
 * logged with outcome `lease_expired`; the task then retries after the policy's backoff or is EXHAUSTED.
 * `requireLeaseExpiredBy: now` makes the store refuse it if the worker reported (or the lease moved) meanwhile.
 */
export function decideLeaseExpired(task: RetryTask, ctx: DecisionContext): AttemptCompletion {
  // The claim wrote `updatedAt`, and nothing else touches an IN_FLIGHT task but its completion: when the attempt began.
  const startedAt = task.updatedAt;
  const leaseEnd = task.leaseExpiresAt ?? ctx.now;
  const errorMessage = `lease expired at ${new Date(leaseEnd).toISOString()}: worker ${task.leaseOwner ?? 'unknown'} did not report the attempt's result`;
  const base: OutcomeBase = {
    attemptNumber: task.attemptNumber + 1,
    runStartedAt: task.runStartedAt ?? startedAt,
    lastError: errorMessage,
    lastResponseStatus: null,
  };
  // Nothing is known of how the lost attempt ended: the main schedule.
  const next = expiring(retryOrExhaust(task, base, TaskEvent.LEASE_EXPIRED, undefined, undefined, ctx), ctx.now, ctx.retention);
  const log: AttemptLog = {
    tenantId: task.tenantId,
    taskId: task.taskId,
    attemptNumber: base.attemptNumber,
    startedAt,
    durationMs: Math.max(0, leaseEnd - startedAt),
    responseStatus: null,
    errorMessage,
    outcome: AttemptLogOutcome.LEASE_EXPIRED,
    responseBodySnippet: null,
    nextAttemptAt: next.nextAttemptAt,
    // The attempt was the lost worker's, not the reaper's.
    workerId: task.leaseOwner ?? ctx.workerId,
    delayedBy: null,
    backoffAt: null,
  };
  return withCancel(task, {
    tenantId: task.tenantId,
    taskId: task.taskId,
    fencingToken: task.fencingToken,
    requireLeaseExpiredBy: ctx.now,
    attempt: log,
    next,
  }, ctx.now, ctx.retention);
}
