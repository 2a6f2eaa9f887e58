import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { AttemptLog, RetryTask, StoredPolicy } from '../../domain/task.js';
import type { AttemptCompletion, TaskOutcome, TaskPatch } from '../../store/store.js';
import { PATCH_COLUMNS } from '../sql/sql-rows.js';

/** A `tasks` row as pg returns it: jsonb and json decoded, bigint as number (see `connection.ts`). */
export interface TaskRow {
  tenant_id: string;
  task_id: string;
  idempotency_key: string;
  request_hash: string;
  target_url: string;
  method: string;
  headers: Record<string, string>;
  /** The body as stored in its `json` column: pg decodes the JSON string back to the body. */
  body: string | null;
  body_ref: string | null;
  policy_id: string | null;
  policy: RetryPolicy | null;
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
  cancel_requested: boolean;
  last_error: string | null;
  last_response_status: number | null;
  dead_letter_reason: string | null;
  trace_context: string | null;
}

/** A stored row as the domain's task. */
export function taskFromRow(row: TaskRow): RetryTask {
  return {
    tenantId: row.tenant_id,
    taskId: row.task_id,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    targetUrl: row.target_url,
    method: row.method,
    headers: row.headers,
    body: row.body,
    bodyRef: row.body_ref,
    policyId: row.policy_id,
    policy: row.policy,
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
    cancelRequested: row.cancel_requested,
    lastError: row.last_error,
    lastResponseStatus: row.last_response_status,
    deadLetterReason: row.dead_letter_reason,
    traceContext: row.trace_context,
  };
}

/**
 * PostgreSQL text cannot hold U+0000. The free-text diagnostics (errors, reasons, a response body's first bytes,
 * which a binary response may contain) have it replaced by U+FFFD rather than failing the whole batch they are
 * written in. The request body keeps it: it is stored as JSON (see `001-init.sql`).
 */
export function text(value: string | null): string | null {
  return value === null || !value.includes('\u0000') ? value : value.replaceAll('\u0000', '\uFFFD');
}

/** One element of `insert-tasks`' `$1`: the task's columns, `body` JSON-encoded, and its index `i`. */
export function taskRecord(task: RetryTask, i: number): Record<string, unknown> {
  return {
    i,
    tenant_id: task.tenantId,
    task_id: task.taskId,
    idempotency_key: task.idempotencyKey,
    request_hash: task.requestHash,
    target_url: task.targetUrl,
    method: task.method,
    headers: task.headers,
    body: task.body === null ? null : JSON.stringify(task.body),
    body_ref: task.bodyRef,
    policy_id: task.policyId,
    policy: task.policy,
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
    cancel_requested: task.cancelRequested,
    last_error: text(task.lastError),
    last_response_status: task.lastResponseStatus,
    dead_letter_reason: text(task.deadLetterReason),
    trace_context: task.traceContext,
  };
}

function outcomeRecord(outcome: TaskOutcome, prefix: '' | 'c_'): Record<string, unknown> {
  return {
    [`${prefix}status`]: outcome.status,
    [`${prefix}attempt_number`]: outcome.attemptNumber,
    [`${prefix}next_attempt_at`]: outcome.nextAttemptAt,
    [`${prefix}run_started_at`]: outcome.runStartedAt,
    [`${prefix}last_delay_ms`]: outcome.lastDelayMs,
    [`${prefix}last_error`]: text(outcome.lastError),
    [`${prefix}last_response_status`]: outcome.lastResponseStatus,
    [`${prefix}dead_letter_reason`]: text(outcome.deadLetterReason),
  };
}

function attemptRecord(attempt: AttemptLog | undefined, prefix: 'a_' | 'ac_'): Record<string, unknown> {
  if (attempt === undefined) return {};
  return {
    [`${prefix}tenant_id`]: attempt.tenantId,
    [`${prefix}task_id`]: attempt.taskId,
    [`${prefix}attempt_number`]: attempt.attemptNumber,
    [`${prefix}started_at`]: attempt.startedAt,
    [`${prefix}duration_ms`]: attempt.durationMs,
    [`${prefix}response_status`]: attempt.responseStatus,
    [`${prefix}error_message`]: text(attempt.errorMessage),
    [`${prefix}outcome`]: attempt.outcome,
    [`${prefix}response_body_snippet`]: text(attempt.responseBodySnippet),
    [`${prefix}next_attempt_at`]: attempt.nextAttemptAt,
    [`${prefix}worker_id`]: attempt.workerId,
  };
}

/** One element of `complete-attempts`' `$1`. Absent keys read as NULL in `json_to_recordset`. */
export function completionRecord(completion: AttemptCompletion, i: number): Record<string, unknown> {
  return {
    i,
    tenant_id: completion.tenantId,
    task_id: completion.taskId,
    fencing_token: completion.fencingToken,
    require_lease_expired_by: completion.requireLeaseExpiredBy ?? null,
    has_cancel: completion.ifCancelRequested !== undefined,
    ...outcomeRecord(completion.next, ''),
    ...outcomeRecord(completion.ifCancelRequested ?? completion.next, 'c_'),
    ...attemptRecord(completion.attempt, 'a_'),
    // Only meaningful with ifCancelRequested, which alone can make it apply.
    ...attemptRecord(completion.ifCancelRequested === undefined ? undefined : completion.attemptIfCancelRequested, 'ac_'),
  };
}

/** `update-task`'s `$4`: one key per patched column, absent fields left out (the stored value stays). */
export function patchRecord(patch: TaskPatch): string {
  const record: Record<string, unknown> = {};
  for (const [property, column] of Object.entries(PATCH_COLUMNS) as [keyof TaskPatch, string][]) {
    const value = patch[property];
    if (value !== undefined) record[column] = typeof value === 'string' ? text(value) : value;
  }
  return JSON.stringify(record);
}

/** What `complete-attempts` returns for each completion applied: its index in the call and a summary of the row. */
export interface CompletedRow {
  i: number;
  status: TaskStatus;
  next_attempt_at: number | null;
  version: number;
  cancel_requested: boolean;
}

/** A `policies` row as pg returns it (jsonb decoded). */
export interface PolicyRow {
  tenant_id: string;
  policy_id: string;
  policy: RetryPolicy;
  created_at: number;
  updated_at: number;
  version: number;
}

/** A stored policy row as the domain's named policy. */
export function policyFromRow(row: PolicyRow): StoredPolicy {
  return {
    tenantId: row.tenant_id,
    policyId: row.policy_id,
    policy: row.policy,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}
