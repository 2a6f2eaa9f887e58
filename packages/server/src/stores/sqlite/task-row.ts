import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { AttemptLog, AttemptOutcome, RetryTask, StoredPolicy } from '../../domain/task.js';

/** Every task column, in one order shared by SELECT and RETURNING (never `*`, so a new column is a choice). */
export const TASK_COLUMNS = `tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body,
  body_ref, policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
  next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version, cancel_requested,
  last_error, last_response_status, dead_letter_reason, trace_context`;

/** A `tasks` row as better-sqlite3 returns it. */
export interface TaskRow {
  tenant_id: string;
  task_id: string;
  idempotency_key: string;
  request_hash: string;
  target_url: string;
  method: string;
  headers: string;
  body: string | null;
  body_ref: string | null;
  policy_id: string | null;
  policy: string | null;
  status: TaskStatus;
  attempt_number: number;
  run_attempt_offset: number;
  run_started_at: number | null;
  last_delay_ms: number;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  fencing_token: number;
  version: number;
  cancel_requested: number;
  last_error: string | null;
  last_response_status: number | null;
  dead_letter_reason: string | null;
  trace_context: string | null;
}

/** Named parameters of the task INSERT: the row with JSON and booleans encoded, and `ended_at`. */
export interface TaskParams extends TaskRow {
  /** `updated_at` for a task inserted in a terminal status (its end), else null: see 001-init.sql. */
  ended_at: number | null;
}

/** A stored row as the domain's task: JSON decoded, 0/1 as boolean. */
export function taskFromRow(row: TaskRow): RetryTask {
  return {
    tenantId: row.tenant_id,
    taskId: row.task_id,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    targetUrl: row.target_url,
    method: row.method,
    headers: JSON.parse(row.headers) as Record<string, string>,
    body: row.body,
    bodyRef: row.body_ref,
    policyId: row.policy_id,
    policy: row.policy === null ? null : (JSON.parse(row.policy) as RetryPolicy),
    status: row.status,
    attemptNumber: row.attempt_number,
    runAttemptOffset: row.run_attempt_offset,
    runStartedAt: row.run_started_at,
    lastDelayMs: row.last_delay_ms,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    fencingToken: row.fencing_token,
    version: row.version,
    cancelRequested: row.cancel_requested === 1,
    lastError: row.last_error,
    lastResponseStatus: row.last_response_status,
    deadLetterReason: row.dead_letter_reason,
    traceContext: row.trace_context,
  };
}

/** A task as named parameters of the task INSERT (the inverse of {@link taskFromRow}). */
export function taskToParams(task: RetryTask): TaskParams {
  return {
    tenant_id: task.tenantId,
    task_id: task.taskId,
    idempotency_key: task.idempotencyKey,
    request_hash: task.requestHash,
    target_url: task.targetUrl,
    method: task.method,
    headers: JSON.stringify(task.headers),
    body: task.body,
    body_ref: task.bodyRef,
    policy_id: task.policyId,
    policy: task.policy === null ? null : JSON.stringify(task.policy),
    status: task.status,
    attempt_number: task.attemptNumber,
    run_attempt_offset: task.runAttemptOffset,
    run_started_at: task.runStartedAt,
    last_delay_ms: task.lastDelayMs,
    next_attempt_at: task.nextAttemptAt,
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    lease_owner: task.leaseOwner,
    lease_expires_at: task.leaseExpiresAt,
    fencing_token: task.fencingToken,
    version: task.version,
    cancel_requested: task.cancelRequested ? 1 : 0,
    last_error: task.lastError,
    last_response_status: task.lastResponseStatus,
    dead_letter_reason: task.deadLetterReason,
    trace_context: task.traceContext,
    ended_at: task.status === 'PENDING' || task.status === 'IN_FLIGHT' ? null : task.updatedAt,
  };
}

/** Every attempt column, in the order of {@link AttemptRow}. */
export const ATTEMPT_COLUMNS = `tenant_id, task_id, attempt_number, started_at, duration_ms, response_status,
  error_message, outcome, response_body_snippet, next_attempt_at, worker_id`;

/** An `attempts` row, which is also the attempt INSERT's named parameters. */
export interface AttemptRow {
  tenant_id: string;
  task_id: string;
  attempt_number: number;
  started_at: number;
  duration_ms: number;
  response_status: number | null;
  error_message: string | null;
  outcome: AttemptOutcome;
  response_body_snippet: string | null;
  next_attempt_at: number | null;
  worker_id: string;
}

/** A stored attempt row as the domain's attempt log entry. */
export function attemptFromRow(row: AttemptRow): AttemptLog {
  return {
    tenantId: row.tenant_id,
    taskId: row.task_id,
    attemptNumber: row.attempt_number,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    responseStatus: row.response_status,
    errorMessage: row.error_message,
    outcome: row.outcome,
    responseBodySnippet: row.response_body_snippet,
    nextAttemptAt: row.next_attempt_at,
    workerId: row.worker_id,
  };
}

/** An attempt log entry as named parameters of the attempt INSERT. */
export function attemptToParams(attempt: AttemptLog): AttemptRow {
  return {
    tenant_id: attempt.tenantId,
    task_id: attempt.taskId,
    attempt_number: attempt.attemptNumber,
    started_at: attempt.startedAt,
    duration_ms: attempt.durationMs,
    response_status: attempt.responseStatus,
    error_message: attempt.errorMessage,
    outcome: attempt.outcome,
    response_body_snippet: attempt.responseBodySnippet,
    next_attempt_at: attempt.nextAttemptAt,
    worker_id: attempt.workerId,
  };
}

/** A `policies` row (the policy as JSON text), also the policy statements' named parameters. */
export interface PolicyRow {
  tenant_id: string;
  policy_id: string;
  policy: string;
  created_at: number;
  updated_at: number;
  version: number;
}

/** A stored policy row as the domain's named policy. */
export function policyFromRow(row: PolicyRow): StoredPolicy {
  return {
    tenantId: row.tenant_id,
    policyId: row.policy_id,
    policy: JSON.parse(row.policy) as RetryPolicy,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}
