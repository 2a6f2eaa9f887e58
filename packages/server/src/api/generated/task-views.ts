// Generated from the task fields (src/domain/task-fields.ts) by packages/server/scripts/generate-row-mappers.mjs.
// Do not edit: run `npm run generate:row-mappers -w packages/server` after changing a field or a codec.
import type { RetryTask } from '../../domain/task.js';
import { redactHeaders, redactUrlQuery } from '../../secrets/redaction.js';
import { shownBody, shownCallback } from '../shown-values.js';
import type { TaskSummaryView, TaskView } from '../views.js';

/** The API view of a task, secrets redacted: see views.ts. */
export function toTaskView(t: RetryTask): TaskView {
  return {
    taskId: t.taskId,
    idempotencyKey: t.idempotencyKey,
    targetUrl: redactUrlQuery(t.targetUrl),
    targetKey: t.targetKey,
    method: t.method,
    headers: redactHeaders(t.headers),
    body: shownBody(t),
    bodyRef: t.bodyRef,
    policyId: t.policyId,
    policy: t.policy,
    status: t.status,
    attemptNumber: t.attemptNumber,
    nextAttemptAt: t.nextAttemptAt,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    leaseExpiresAt: t.leaseExpiresAt,
    cancelRequested: t.cancelRequested,
    lastError: t.lastError,
    lastResponseStatus: t.lastResponseStatus,
    deadLetterReason: t.deadLetterReason,
    sensitiveBody: t.sensitiveBody,
    expiresAt: t.expiresAt,
    attemptTimeoutMs: t.attemptTimeoutMs,
    connectTimeoutMs: t.connectTimeoutMs,
    callback: shownCallback(t.callback),
  };
}

/** The listing view of a task (no body), secrets redacted: see views.ts. */
export function toTaskSummaryView(t: RetryTask): TaskSummaryView {
  return {
    taskId: t.taskId,
    idempotencyKey: t.idempotencyKey,
    targetUrl: redactUrlQuery(t.targetUrl),
    targetKey: t.targetKey,
    method: t.method,
    headers: redactHeaders(t.headers),
    bodyRef: t.bodyRef,
    policyId: t.policyId,
    policy: t.policy,
    status: t.status,
    attemptNumber: t.attemptNumber,
    nextAttemptAt: t.nextAttemptAt,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    leaseExpiresAt: t.leaseExpiresAt,
    cancelRequested: t.cancelRequested,
    lastError: t.lastError,
    lastResponseStatus: t.lastResponseStatus,
    deadLetterReason: t.deadLetterReason,
    sensitiveBody: t.sensitiveBody,
    expiresAt: t.expiresAt,
    attemptTimeoutMs: t.attemptTimeoutMs,
    connectTimeoutMs: t.connectTimeoutMs,
    callback: shownCallback(t.callback),
  };
}
