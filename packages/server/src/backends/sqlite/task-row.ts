import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { AttemptLog, RetryTask, StoredPolicy } from '../../domain/task.js';
import type { JsonCache } from './json-cache.js';

/** Every task column, in one order shared by SELECT, RETURNING and INSERT (never `*`, so a new column is a choice). */
export const TASK_COLUMN_NAMES = [
  'tenant_id',
  'task_id',
  'idempotency_key',
  'request_hash',
  'target_url',
  'method',
  'headers',
  'body',
  'body_ref',
  'policy_id',
  'policy',
  'status',
  'attempt_number',
  'run_attempt_offset',
  'run_started_at',
  'last_delay_ms',
  'next_attempt_at',
  'created_at',
  'updated_at',
  'lease_owner',
  'lease_expires_at',
  'fencing_token',
  'version',
  'cancel_requested',
  'last_error',
  'last_response_status',
  'dead_letter_reason',
  'trace_context',
] as const;

/** {@link TASK_COLUMN_NAMES} as a column list. */
export const TASK_COLUMNS = TASK_COLUMN_NAMES.join(', ');

/**
 * A `tasks` row as a raw better-sqlite3 statement returns it: the values of {@link TASK_COLUMN_NAMES}, in order.
 * Arrays, not objects: reading a row as an object makes better-sqlite3 build one keyed object per row, which on
 * a claim of a hundred rows costs more than mapping them.
 */
export type TaskRow = [
  tenant_id: string,
  task_id: string,
  idempotency_key: string,
  request_hash: string,
  target_url: string,
  method: string,
  headers: string,
  body: string | null,
  body_ref: string | null,
  policy_id: string | null,
  policy: string | null,
  status: TaskStatus,
  attempt_number: number,
  run_attempt_offset: number,
  run_started_at: number | null,
  last_delay_ms: number,
  next_attempt_at: number | null,
  created_at: number,
  updated_at: number,
  lease_owner: string | null,
  lease_expires_at: number | null,
  fencing_token: number,
  version: number,
  cancel_requested: number,
  last_error: string | null,
  last_response_status: number | null,
  dead_letter_reason: string | null,
  trace_context: string | null,
];

/** Positional parameters of the task INSERT: a {@link TaskRow} followed by `ended_at`. */
export type TaskParams = [...TaskRow, ended_at: number | null];

/**
 * A stored row (possibly followed by more columns) as the domain's task: JSON decoded through `json`, so tasks
 * sharing headers or a policy share one frozen object; 0/1 as boolean.
 */
export function taskFromRow(r: TaskRow | [...TaskRow, ...unknown[]], json: JsonCache): RetryTask {
  const policy = r[10];
  return {
    tenantId: r[0],
    taskId: r[1],
    idempotencyKey: r[2],
    requestHash: r[3],
    targetUrl: r[4],
    method: r[5],
    headers: json.parse<Record<string, string>>(r[6]),
    body: r[7],
    bodyRef: r[8],
    policyId: r[9],
    policy: policy === null ? null : json.parse<RetryPolicy>(policy),
    status: r[11],
    attemptNumber: r[12],
    runAttemptOffset: r[13],
    runStartedAt: r[14],
    lastDelayMs: r[15],
    nextAttemptAt: r[16],
    createdAt: r[17],
    updatedAt: r[18],
    leaseOwner: r[19],
    leaseExpiresAt: r[20],
    fencingToken: r[21],
    version: r[22],
    cancelRequested: r[23] === 1,
    lastError: r[24],
    lastResponseStatus: r[25],
    deadLetterReason: r[26],
    traceContext: r[27],
  };
}

/**
 * Writes into `row` (in place, positions as in {@link TaskRow}) what claiming it changed: the row as the claim left
 * it, without reading it again. Mirrors `CLAIM_ONE` in statements.ts.
 */
export function markClaimed(row: TaskRow | [...TaskRow, ...unknown[]], workerId: string, leaseExpiresAt: number, now: number): void {
  row[11] = 'IN_FLIGHT'; // status
  row[18] = now; // updated_at
  row[19] = workerId; // lease_owner
  row[20] = leaseExpiresAt; // lease_expires_at
  row[21] += 1; // fencing_token
  row[22] += 1; // version
}

/** A task as parameters of the task INSERT (the inverse of {@link taskFromRow}), with `ended_at` (see 001-init.sql). */
export function taskToParams(task: RetryTask): TaskParams {
  return [
    task.tenantId,
    task.taskId,
    task.idempotencyKey,
    task.requestHash,
    task.targetUrl,
    task.method,
    JSON.stringify(task.headers),
    task.body,
    task.bodyRef,
    task.policyId,
    task.policy === null ? null : JSON.stringify(task.policy),
    task.status,
    task.attemptNumber,
    task.runAttemptOffset,
    task.runStartedAt,
    task.lastDelayMs,
    task.nextAttemptAt,
    task.createdAt,
    task.updatedAt,
    task.leaseOwner,
    task.leaseExpiresAt,
    task.fencingToken,
    task.version,
    task.cancelRequested ? 1 : 0,
    task.lastError,
    task.lastResponseStatus,
    task.deadLetterReason,
    task.traceContext,
    task.status === 'PENDING' || task.status === 'IN_FLIGHT' ? null : task.updatedAt,
  ];
}

/** Every attempt column, in the order of {@link AttemptRow}. */
export const ATTEMPT_COLUMNS = `tenant_id, task_id, attempt_number, started_at, duration_ms, response_status,
  error_message, outcome, response_body_snippet, next_attempt_at, worker_id`;

/** An attempt log entry as positional parameters of the attempt INSERT, in {@link ATTEMPT_COLUMNS} order. */
export function attemptToParams(attempt: AttemptLog): (string | number | null)[] {
  return [
    attempt.tenantId,
    attempt.taskId,
    attempt.attemptNumber,
    attempt.startedAt,
    attempt.durationMs,
    attempt.responseStatus,
    attempt.errorMessage,
    attempt.outcome,
    attempt.responseBodySnippet,
    attempt.nextAttemptAt,
    attempt.workerId,
  ];
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
