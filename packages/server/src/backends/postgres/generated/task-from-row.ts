// Generated from the task fields (src/domain/task-fields.ts) by packages/server/scripts/generate-row-mappers.mjs.
// Do not edit: run `npm run generate:row-mappers -w packages/server` after changing a field or a codec.
import type { RetryTask } from '../../../domain/task.js';
import { targetUrlOfStored } from '../../../domain/target-key.js';
import type { PurgedTask } from '../../../store/store.js';
import type { TaskRow } from '../task-row.js';

/** A stored row as the domain's task: see task-row.ts. */
export function taskFromRow(r: TaskRow): RetryTask {
  return {
    tenantId: r.tenant_id as RetryTask['tenantId'],
    taskId: r.task_id as RetryTask['taskId'],
    idempotencyKey: r.idempotency_key as RetryTask['idempotencyKey'],
    requestHash: (r.request_hash as Buffer).toString('hex'),
    targetUrl: targetUrlOfStored(r.target_url as string, r.target_key as string),
    targetKey: r.target_key as RetryTask['targetKey'],
    method: r.method as RetryTask['method'],
    headers: r.headers as RetryTask['headers'],
    body: r.body === null ? null : (r.body as Buffer).toString('utf8'),
    bodyRef: r.body_ref as RetryTask['bodyRef'],
    policyId: r.policy_id as RetryTask['policyId'],
    policy: r.policy as RetryTask['policy'],
    status: r.status as RetryTask['status'],
    attemptNumber: r.attempt_number as RetryTask['attemptNumber'],
    runAttemptOffset: r.run_attempt_offset as RetryTask['runAttemptOffset'],
    runStartedAt: r.run_started_at as RetryTask['runStartedAt'],
    lastDelayMs: r.last_delay_ms as RetryTask['lastDelayMs'],
    nextAttemptAt: r.next_attempt_at as RetryTask['nextAttemptAt'],
    createdAt: r.created_at as RetryTask['createdAt'],
    updatedAt: r.updated_at as RetryTask['updatedAt'],
    leaseOwner: r.lease_owner as RetryTask['leaseOwner'],
    leaseExpiresAt: r.lease_expires_at as RetryTask['leaseExpiresAt'],
    fencingToken: r.fencing_token as RetryTask['fencingToken'],
    version: r.version as RetryTask['version'],
    cancelRequested: r.cancel_requested as RetryTask['cancelRequested'],
    lastError: r.last_error as RetryTask['lastError'],
    lastResponseStatus: r.last_response_status as RetryTask['lastResponseStatus'],
    deadLetterReason: r.dead_letter_reason as RetryTask['deadLetterReason'],
    traceContext: r.trace_context as RetryTask['traceContext'],
    sensitiveBody: r.sensitive_body as RetryTask['sensitiveBody'],
    expiresAt: r.expires_at as RetryTask['expiresAt'],
    attemptTimeoutMs: r.attempt_timeout_ms as RetryTask['attemptTimeoutMs'],
    connectTimeoutMs: r.connect_timeout_ms as RetryTask['connectTimeoutMs'],
    callback: r.callback as RetryTask['callback'],
  };
}

/** A row of purge-expired.sql as the task it deleted: see task-row.ts. */
export function purgedFromRow(r: TaskRow): PurgedTask {
  return {
    tenantId: r.tenant_id as RetryTask['tenantId'],
    taskId: r.task_id as RetryTask['taskId'],
    bodyRef: r.body_ref as RetryTask['bodyRef'],
    status: r.status as RetryTask['status'],
  };
}
