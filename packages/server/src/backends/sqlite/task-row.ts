import type { RetryPolicy, TaskStatus } from '@retryd/core';
import { TASK_FIELD_NAMES, TASK_FIELD_SPECS, type TaskFieldName } from '../../domain/task-fields.js';
import { taskFromRow as generatedTaskFromRow, taskToParams as generatedTaskToParams } from './generated/task-mappers.js';
import type { AttemptLog, RetryTask, StoredPolicy } from '../../domain/task.js';
import type { TaskCallback } from '../../domain/task-callback.js';
import type { JsonCache } from '../../store/json-cache.js';
import { uuidBytes } from '../sql/task-id-params.js';
import { statusCode } from './status-guards.js';
import { TARGET_KEY_COLUMN, TASK_STORED_COLUMN_NAMES } from '../sql/task-columns.js';

// A task's SQLite row and its mappings, all derived from the one definition of a task's fields
// (domain/task-fields.ts): a field added there is read, written and claimed here with no edit.

/** A value as better-sqlite3 binds and returns it (INTEGER and REAL both come back as numbers, a BLOB as a Buffer). */
export type SqlValue = string | number | Buffer | null;

/**
 * A `tasks` row as a raw better-sqlite3 statement returns it: the task columns in row order (the order of
 * `TASK_FIELDS`, see `TASK_COLUMN_NAMES`), possibly followed by more columns (a claim reads the rowid last).
 * Arrays, not objects: reading a row as an object makes better-sqlite3 build one keyed object per row, which on a
 * claim of a hundred rows costs more than mapping them.
 */
export type TaskRow = SqlValue[];

/** The task columns as the task INSERT names them, in row order (`queue_id` in place of the key: see 010). */
export const TASK_INSERT_COLUMNS: readonly string[] = TASK_STORED_COLUMN_NAMES;

/** The task columns as a SELECT or RETURNING list, the target key read from the SQL expression `targetKey`. */
function readColumns(targetKey: string): string {
  return TASK_FIELD_SPECS.map((spec) => {
    if (spec.column === TARGET_KEY_COLUMN) return `${targetKey} AS target_key`;
    // Not `AS task_id`: an ORDER BY names a result column before a table column, and would then sort by this text
    // rather than walk an index of the column (rows are read by position, so the names are never read).
    if (spec.codec === 'hex' || spec.codec === 'uuid') return `lower(hex(${spec.column})) AS ${spec.column}_hex`;
    return spec.column;
  }).join(', ');
}

/**
 * The task columns as a SELECT or RETURNING list of `tasks` (not aliased), in row order:
 * - each BLOB read as its lower-case hex text by SQLite itself: a digest (`hex` codec: the request hash) is that text
 *   in the domain, and a task id (`uuid`) gets its hyphens back in {@link taskFromRow} (`hyphenatedUuid`, cheaper in
 *   JavaScript than in SQL: 0.17 against 0.6 µs a row). A BLOB read as a Buffer costs better-sqlite3 a Buffer per
 *   row and the mapper a `toString('hex')`: measured on claims of 128 tasks, reading the hash's text instead takes
 *   about 1.5 µs of CPU less per claimed task;
 * - the target key read through the row's queue number (one seek by rowid into `target_queues`).
 * Every statement that returns task rows selects this list, or {@link TASK_READ_COLUMNS_OF_QUEUE}.
 */
export const TASK_READ_COLUMNS: string = readColumns('(SELECT q.target_key FROM target_queues q WHERE q.queue_id = tasks.queue_id)');

/**
 * {@link TASK_READ_COLUMNS} for a statement that reads one queue's tasks, whose key its first parameter binds: a
 * claim knows the key of the queue it claims from, and need not look it up for every row.
 */
export const TASK_READ_COLUMNS_OF_QUEUE: string = readColumns('?');

/** Where `name`'s value sits in a {@link TaskRow}. */
export function rowPosition(name: TaskFieldName): number {
  return TASK_FIELD_NAMES.indexOf(name);
}

/** A stored row as the domain's task. See {@link taskFromRow}. */
export type TaskFromRow = (row: readonly SqlValue[], json: JsonCache) => RetryTask;

/**
 * A stored row (possibly followed by more columns) as the domain's task: JSON decoded through `json`, so tasks
 * sharing headers or a policy share one frozen object; 0/1 as boolean.
 *
 * Generated from the field definitions (generated/task-mappers.ts, written by row-mapper-source.ts) as one object
 * literal in field order: every task then has the same shape, and the mapper costs no loop or per-field dispatch on
 * the claim path.
 */
export const taskFromRow: TaskFromRow = generatedTaskFromRow;

/** Positional parameters of the task INSERT: the task's columns in row order ({@link TASK_INSERT_COLUMNS}), then `ended_at`. */
export type TaskParams = SqlValue[];

/**
 * A task as parameters of the task INSERT (the inverse of {@link taskFromRow}), its target queue's number
 * (`queueId`) in place of its target key, followed by `ended_at`: NULL while the task is live, its `updatedAt` once
 * it ended (see 001-init.sql). Generated, as {@link taskFromRow}.
 */
export const taskToParams: (task: RetryTask, queueId: number) => TaskParams = generatedTaskToParams;

// What a claim changes, by position: see `CLAIM_ONE` in statements.ts, which this mirrors.
const STATUS = rowPosition('status');
const UPDATED_AT = rowPosition('updatedAt');
const LEASE_OWNER = rowPosition('leaseOwner');
const LEASE_EXPIRES_AT = rowPosition('leaseExpiresAt');
const FENCING_TOKEN = rowPosition('fencingToken');
const VERSION = rowPosition('version');

/**
 * Writes into `row` (in place) what claiming it changed: the row as the claim left it, without reading it again.
 * Mirrors `CLAIM_ONE` in statements.ts.
 */
export function markClaimed(row: TaskRow, status: TaskStatus, workerId: string, leaseExpiresAt: number, now: number): void {
  row[STATUS] = statusCode(status);
  row[UPDATED_AT] = now;
  row[LEASE_OWNER] = workerId;
  row[LEASE_EXPIRES_AT] = leaseExpiresAt;
  row[FENCING_TOKEN] = (row[FENCING_TOKEN] as number) + 1;
  row[VERSION] = (row[VERSION] as number) + 1;
}

/** Every attempt column, in the order of `AttemptRow` (attempts are not task fields; their table is fixed): the INSERT's list. */
export const ATTEMPT_COLUMNS = `tenant_id, task_id, attempt_number, started_at, duration_ms, response_status,
  error_message, outcome, response_body_snippet, next_attempt_at, worker_id, delayed_by, backoff_at`;

/**
 * {@link ATTEMPT_COLUMNS} as a SELECT list: the task id (a BLOB) read as its hex text, as {@link TASK_READ_COLUMNS}
 * reads it, to be hyphenated by the reader (`hyphenatedUuid`).
 */
export const ATTEMPT_READ_COLUMNS = ATTEMPT_COLUMNS.replace('task_id', 'lower(hex(task_id)) AS task_id');

/** An attempt log entry as positional parameters of the attempt INSERT, in {@link ATTEMPT_COLUMNS} order. */
export function attemptToParams(attempt: AttemptLog): SqlValue[] {
  return [
    attempt.tenantId,
    uuidBytes(attempt.taskId, 'attempts.task_id'),
    attempt.attemptNumber,
    attempt.startedAt,
    attempt.durationMs,
    attempt.responseStatus,
    attempt.errorMessage,
    attempt.outcome,
    attempt.responseBodySnippet,
    attempt.nextAttemptAt,
    attempt.workerId,
    attempt.delayedBy,
    attempt.backoffAt,
  ];
}

/** A `policies` row (the policy as JSON text), also the policy statements' named parameters. */
export interface PolicyRow {
  tenant_id: string;
  policy_id: string;
  policy: string;
  /** The policy's callback as JSON text, or null. */
  callback: string | null;
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
    callback: row.callback === null ? null : (JSON.parse(row.callback) as TaskCallback),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}
