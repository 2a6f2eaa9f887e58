import type { RetryTask } from '../domain/task.js';
import type { AttemptCompletion, CompletionResult } from '../store/store.js';

/** An applied completion's summary, as `completeAttempts` returns it. */
export type AppliedCompletion = Extract<CompletionResult, { kind: 'applied' }>;

/**
 * The task as the store holds it after `completion` was applied, rebuilt from the claimed task, the outcome the
 * store chose (`ifCancelRequested` exactly when a cancel was requested and one was given) and the store's summary,
 * so hooks get a whole task without the store reading every column back. Pure.
 *
 * Nothing else can change an IN_FLIGHT task while its holder's token is current: the API may only raise
 * `cancelRequested` (reported by the summary), so every other field is the claimed one.
 *
 * @example
 * ```ts
 * const [result] = await store.completeAttempts([completion], now);
 * if (result.kind === 'applied') onDeadLetter(taskAfterCompletion(claimed, completion, result, now));
 * ```
 */
export function taskAfterCompletion(
  claimed: RetryTask,
  completion: AttemptCompletion,
  result: AppliedCompletion,
  now: number,
): RetryTask {
  const outcome =
    result.cancelRequested && completion.ifCancelRequested !== undefined ? completion.ifCancelRequested : completion.next;
  // One literal in the row order of TASK_FIELDS: a fixed shape, no spread (see decide-outcome.ts); a test checks the order.
  return {
    tenantId: claimed.tenantId,
    taskId: claimed.taskId,
    idempotencyKey: claimed.idempotencyKey,
    requestHash: claimed.requestHash,
    targetUrl: claimed.targetUrl,
    targetKey: claimed.targetKey,
    method: claimed.method,
    headers: claimed.headers,
    body: claimed.body,
    bodyRef: claimed.bodyRef,
    policyId: claimed.policyId,
    policy: claimed.policy,
    status: result.status,
    attemptNumber: outcome.attemptNumber,
    runAttemptOffset: claimed.runAttemptOffset,
    runStartedAt: outcome.runStartedAt,
    lastDelayMs: outcome.lastDelayMs,
    nextAttemptAt: result.nextAttemptAt,
    createdAt: claimed.createdAt,
    updatedAt: now,
    leaseOwner: null,
    leaseExpiresAt: null,
    fencingToken: claimed.fencingToken,
    version: result.version,
    cancelRequested: result.cancelRequested,
    lastError: outcome.lastError,
    lastResponseStatus: outcome.lastResponseStatus,
    deadLetterReason: outcome.deadLetterReason,
    traceContext: claimed.traceContext,
    sensitiveBody: claimed.sensitiveBody,
    expiresAt: outcome.expiresAt,
    attemptTimeoutMs: claimed.attemptTimeoutMs,
    connectTimeoutMs: claimed.connectTimeoutMs,
    callback: claimed.callback,
  };
}

/** The attempt log entry the store wrote for an applied completion (the cancel alternative when it applied that). */
export function attemptLogged(completion: AttemptCompletion, result: AppliedCompletion): AttemptCompletion['attempt'] {
  const cancelled = result.cancelRequested && completion.ifCancelRequested !== undefined;
  return (cancelled ? completion.attemptIfCancelRequested : undefined) ?? completion.attempt;
}
