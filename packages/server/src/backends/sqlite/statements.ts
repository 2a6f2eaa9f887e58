import type { Database } from 'better-sqlite3';
import type { TaskStatus } from '@retryd/core';
import type { AttemptCompletion, TaskOutcome, TaskPatch } from '../../store/store.js';
import { ATTEMPT_COLUMNS, TASK_COLUMN_NAMES, TASK_COLUMNS } from './task-row.js';
import { PATCH_COLUMNS } from '../sql/sql-rows.js';
import type { AttemptRow } from '../sql/sql-rows.js';
import type { PolicyRow, TaskParams, TaskRow } from './task-row.js';

// Every statement of the SQLite store, each with its contract. Prepared once, in `prepareStatements`.
// Statements run once per task or per attempt take positional parameters and return raw rows (arrays): binding an
// object by name and building one object per row cost more than the SQL of a claim or a completion. The others
// keep named parameters (`@name`), which better-sqlite3 requires to be bound, every one.

/**
 * The due tasks to claim, earliest due first. Params: `now`, `limit`. Returns raw {@link TaskRow}s followed by the
 * rowid ({@link DueRow}). Walks `tasks_due` from its start and stops after `limit` rows: it never scans.
 *
 * A claim reads the rows, then moves each by rowid ({@link CLAIM_ONE}) in the same IMMEDIATE transaction, rather
 * than one `UPDATE … RETURNING`: SQLite buffers RETURNING rows in a temporary table, and measured, that costs a
 * third more per claimed task than reading them first.
 */
export const SELECT_DUE = `
SELECT ${TASK_COLUMNS}, rowid FROM tasks
WHERE status = 'PENDING' AND next_attempt_at <= ?
ORDER BY next_attempt_at
LIMIT ?`;

/** A {@link SELECT_DUE} row: the task's columns, then its rowid. */
export type DueRow = [...TaskRow, rowid: number];

/**
 * Claims one task read by {@link SELECT_DUE}. Params: `workerId`, `leaseExpiresAt`, `now`, `rowid`. Changes nothing
 * (0 changes) unless the task is still PENDING.
 */
export const CLAIM_ONE = `
UPDATE tasks SET status = 'IN_FLIGHT', lease_owner = ?, lease_expires_at = ?,
  fencing_token = fencing_token + 1, version = version + 1, updated_at = ?
WHERE rowid = ? AND status = 'PENDING'`;

/** The first entry of `tasks_due`. No params. Returns `{ at }` or nothing. */
export const NEXT_DUE_AT = `
SELECT next_attempt_at AS at FROM tasks WHERE status = 'PENDING' ORDER BY next_attempt_at LIMIT 1`;

/** Lapsed leases through `tasks_lease`. Params: `now`, `limit`. Returns raw {@link TaskRow}s. */
export const FIND_EXPIRED_LEASES = `
SELECT ${TASK_COLUMNS} FROM tasks
WHERE status = 'IN_FLIGHT' AND lease_expires_at <= @now
ORDER BY lease_expires_at LIMIT @limit`;

/** The first entry of `tasks_lease`. No params. Returns `{ at }` or nothing. */
export const NEXT_LEASE_EXPIRY_AT = `
SELECT lease_expires_at AS at FROM tasks WHERE status = 'IN_FLIGHT' ORDER BY lease_expires_at LIMIT 1`;

// The end of an attempt, fenced by status, token and (for the lease reaper) lapse, in two forms: one for an outcome
// that keeps the task live (PENDING), one for an outcome that ends it, which also writes `ended_at`. A retry must not
// write `ended_at`, or SQLite would rewrite the task's `tasks_live` entry (see 001-init.sql). Positional parameters:
// this runs once per attempt, and binding an object by name costs more per call than an array.
const COMPLETE_SET = `status = ?, attempt_number = ?, next_attempt_at = ?, run_started_at = ?, last_delay_ms = ?,
  last_error = ?, last_response_status = ?, dead_letter_reason = ?,
  lease_owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = ?`;
const COMPLETE_FENCE = `WHERE tenant_id = ? AND task_id = ? AND status = 'IN_FLIGHT' AND fencing_token = ?
  AND (? IS NULL OR lease_expires_at <= ?) AND (? IS NULL OR cancel_requested = ?)`;

/**
 * Applies an outcome that keeps the task live. Params, in order ({@link CompleteParams}): the outcome's `status`,
 * `attempt_number`, `next_attempt_at`, `run_started_at`, `last_delay_ms`, `last_error`, `last_response_status`,
 * `dead_letter_reason`; `now`; then the fence: `tenantId`, `taskId`, `fencingToken`, `requireLeaseExpiredBy` twice
 * (null: no lapse check), `cancelRequested` twice (null: either; 0 or 1: only if `cancel_requested` is that).
 * Returns `[version, cancel_requested]` of the changed row, or nothing when fenced out.
 */
export const COMPLETE_TO_LIVE = `UPDATE tasks SET ${COMPLETE_SET}
${COMPLETE_FENCE}
RETURNING version, cancel_requested`;

/** Applies an outcome that ends the task: as {@link COMPLETE_TO_LIVE}, with `now` once more (`ended_at`) after `now`. */
export const COMPLETE_TO_ENDED = `UPDATE tasks SET ${COMPLETE_SET}, ended_at = ?
${COMPLETE_FENCE}
RETURNING version, cancel_requested`;

/** What {@link COMPLETE_TO_LIVE} and {@link COMPLETE_TO_ENDED} return: `[version, cancel_requested]`. */
export type CompletedRow = [version: number, cancelRequested: number];

/** Positional parameters of {@link COMPLETE_TO_LIVE} (of {@link COMPLETE_TO_ENDED}, with `now` twice). */
export type CompleteParams = (string | number | null)[];

/**
 * Binds `outcome` of `completion` to {@link COMPLETE_TO_LIVE} or {@link COMPLETE_TO_ENDED} (`ends`), applied only
 * if `cancel_requested` is `cancelRequested` (null: whatever it is).
 */
export function completeParams(
  completion: AttemptCompletion,
  outcome: TaskOutcome,
  ends: boolean,
  cancelRequested: 0 | 1 | null,
  now: number,
): CompleteParams {
  const lapse = completion.requireLeaseExpiredBy ?? null;
  const set = [
    outcome.status,
    outcome.attemptNumber,
    outcome.nextAttemptAt,
    outcome.runStartedAt,
    outcome.lastDelayMs,
    outcome.lastError,
    outcome.lastResponseStatus,
    outcome.deadLetterReason,
    now,
  ];
  if (ends) set.push(now);
  set.push(completion.tenantId, completion.taskId, completion.fencingToken, lapse, lapse, cancelRequested, cancelRequested);
  return set;
}

/** Whether a task in `status` is live (PENDING or IN_FLIGHT): its `ended_at` is NULL. */
export function isLive(status: TaskStatus): boolean {
  return status === 'PENDING' || status === 'IN_FLIGHT';
}

// `updateTask`: each patchable field is changed only when its `set_*` flag is 1, so one prepared statement
// serves every patch. Leaving IN_FLIGHT drops the lease, which also fences out its holder.
/** The columns `updateTask` may change, in the order of {@link UPDATE_TASK}'s SET list. */
export const patchFields = [
  'status',
  'next_attempt_at',
  'cancel_requested',
  'run_attempt_offset',
  'run_started_at',
  'last_delay_ms',
  'dead_letter_reason',
  'last_error',
  'last_response_status',
  'updated_at',
] as const;
/** One column `updateTask` may change. */
export type PatchField = (typeof patchFields)[number];
/** Named parameters of {@link UPDATE_TASK}: each field with its `set_*` flag, plus the key and expected version. */
export type PatchParams = { [F in PatchField as F | `set_${F}`]: number | string | null } & {
  tenantId: string;
  taskId: string;
  expectedVersion: number;
};

/** Params: see {@link PatchParams}. Returns the changed raw row, or nothing on a version mismatch or absent task. */
export const UPDATE_TASK = `
UPDATE tasks SET
  ${patchFields.map((f) => `${f} = CASE WHEN @set_${f} = 1 THEN @${f} ELSE ${f} END`).join(',\n  ')},
  lease_owner = CASE WHEN @set_status = 1 AND @status <> 'IN_FLIGHT' THEN NULL ELSE lease_owner END,
  lease_expires_at = CASE WHEN @set_status = 1 AND @status <> 'IN_FLIGHT' THEN NULL ELSE lease_expires_at END,
  ended_at = CASE WHEN @set_status = 0 THEN ended_at
    WHEN @status IN ('PENDING', 'IN_FLIGHT') THEN NULL
    ELSE coalesce(ended_at, @updated_at, updated_at) END,
  version = version + 1
WHERE tenant_id = @tenantId AND task_id = @taskId AND version = @expectedVersion
RETURNING ${TASK_COLUMNS}`;

/** Binds a patch to {@link UPDATE_TASK}: fields absent from `patch` keep their stored value. */
export function patchParams(tenantId: string, taskId: string, expectedVersion: number, patch: TaskPatch): PatchParams {
  const params: Record<string, string | number | null> = { tenantId, taskId, expectedVersion };
  for (const [property, column] of Object.entries(PATCH_COLUMNS) as [keyof TaskPatch, PatchField][]) {
    const value = patch[property];
    params[`set_${column}`] = value === undefined ? 0 : 1;
    params[column] = value === undefined ? null : typeof value === 'boolean' ? Number(value) : value;
  }
  return params as PatchParams;
}

interface LeaseParams {
  tenantId: string;
  taskId: string;
  fencingToken: number;
}

// Counts by status without reading a table row: covering walks of `tasks_ended` (by status), `tasks_live` and
// `tasks_in_flight` (PENDING is live minus in flight). One statement, so one snapshot: the three agree.
const COUNTS = (tenant: string) => `
SELECT status, count(*) AS n FROM tasks WHERE ${tenant} ended_at IS NOT NULL GROUP BY ${tenant === '' ? 'tenant_id, ' : ''}status
UNION ALL SELECT 'LIVE', count(*) FROM tasks WHERE ${tenant} ended_at IS NULL
UNION ALL SELECT 'IN_FLIGHT', count(*) FROM tasks WHERE ${tenant} status = 'IN_FLIGHT'`;
/** Params: `tenantId`. Rows `{ status, n }`: one per terminal status present, then `LIVE` and `IN_FLIGHT`. */
export const COUNT_BY_STATUS_OF_TENANT = COUNTS('tenant_id = @tenantId AND');
/** As {@link COUNT_BY_STATUS_OF_TENANT} over every tenant (a terminal status may come once per tenant). */
export const COUNT_BY_STATUS = COUNTS('');

/** The part of a prepared better-sqlite3 statement the store uses. */
export interface Prepared<P extends unknown[], R> {
  run(...params: P): { changes: number };
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

function prepare<P extends unknown[] | object, R = never>(
  db: Database,
  sql: string,
): Prepared<P extends unknown[] ? P : [P], R> {
  return db.prepare(sql) as unknown as Prepared<P extends unknown[] ? P : [P], R>;
}

/** A statement whose rows are arrays of column values, in SELECT order (no object per row). */
function prepareRaw<P extends unknown[] | object, R = never>(
  db: Database,
  sql: string,
): Prepared<P extends unknown[] ? P : [P], R> {
  return db.prepare(sql).raw(true) as unknown as Prepared<P extends unknown[] ? P : [P], R>;
}

/** Creates every fixed statement once. Listings with optional filters are built in `list-tasks.ts`. */
export function prepareStatements(db: Database) {
  return {
    insertTask: prepare<TaskParams>(
      db,
      `INSERT INTO tasks (${TASK_COLUMNS}, ended_at) VALUES (${TASK_COLUMN_NAMES.map(() => '?').join(', ')}, ?)
       ON CONFLICT (tenant_id, idempotency_key) DO NOTHING`,
    ),
    getTask: prepareRaw<[string, string], TaskRow>(
      db,
      `SELECT ${TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND task_id = ?`,
    ),
    getTaskByKey: prepareRaw<[string, string], TaskRow>(
      db,
      `SELECT ${TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND idempotency_key = ?`,
    ),
    updateTask: prepareRaw<PatchParams, TaskRow>(db, UPDATE_TASK),
    selectDue: prepareRaw<[now: number, limit: number], DueRow>(db, SELECT_DUE),
    claimOne: prepare<[workerId: string, leaseExpiresAt: number, now: number, rowid: number]>(db, CLAIM_ONE),
    nextDueAt: prepare<[], { at: number }>(db, NEXT_DUE_AT),
    findExpiredLeases: prepareRaw<{ now: number; limit: number }, TaskRow>(db, FIND_EXPIRED_LEASES),
    nextLeaseExpiryAt: prepare<[], { at: number }>(db, NEXT_LEASE_EXPIRY_AT),
    completeToLive: prepareRaw<CompleteParams, CompletedRow>(db, COMPLETE_TO_LIVE),
    completeToEnded: prepareRaw<CompleteParams, CompletedRow>(db, COMPLETE_TO_ENDED),
    insertAttempt: prepare<(string | number | null)[]>(
      db,
      `INSERT INTO attempts (${ATTEMPT_COLUMNS}) VALUES (${ATTEMPT_COLUMNS.split(',')
        .map(() => '?')
        .join(', ')})`,
    ),
    extendLease: prepare<LeaseParams & { leaseExpiresAt: number }>(
      db,
      `UPDATE tasks SET lease_expires_at = @leaseExpiresAt, version = version + 1
       WHERE tenant_id = @tenantId AND task_id = @taskId AND status = 'IN_FLIGHT' AND fencing_token = @fencingToken`,
    ),
    releaseLease: prepare<LeaseParams & { now: number }>(
      db,
      `UPDATE tasks SET status = 'PENDING', next_attempt_at = @now, lease_owner = NULL, lease_expires_at = NULL,
         version = version + 1, updated_at = @now
       WHERE tenant_id = @tenantId AND task_id = @taskId AND status = 'IN_FLIGHT' AND fencing_token = @fencingToken`,
    ),
    listAttempts: prepare<[string, string, number, number], AttemptRow>(
      db,
      `SELECT ${ATTEMPT_COLUMNS} FROM attempts
       WHERE tenant_id = ? AND task_id = ? AND attempt_number > ? ORDER BY attempt_number LIMIT ?`,
    ),
    insertPolicy: prepare<PolicyRow>(
      db,
      `INSERT INTO policies (tenant_id, policy_id, policy, created_at, updated_at, version)
       VALUES (@tenant_id, @policy_id, @policy, @created_at, @updated_at, @version) ON CONFLICT DO NOTHING`,
    ),
    replacePolicy: prepare<PolicyRow, PolicyRow>(
      db,
      `UPDATE policies SET policy = @policy, updated_at = @updated_at, version = version + 1
       WHERE tenant_id = @tenant_id AND policy_id = @policy_id
       RETURNING tenant_id, policy_id, policy, created_at, updated_at, version`,
    ),
    getPolicy: prepare<[string, string], PolicyRow>(
      db,
      `SELECT tenant_id, policy_id, policy, created_at, updated_at, version FROM policies
       WHERE tenant_id = ? AND policy_id = ?`,
    ),
    listPolicies: prepare<[string, number], PolicyRow>(
      db,
      `SELECT tenant_id, policy_id, policy, created_at, updated_at, version FROM policies
       WHERE tenant_id = ? ORDER BY policy_id LIMIT ?`,
    ),
    listPoliciesAfter: prepare<[string, string, number], PolicyRow>(
      db,
      `SELECT tenant_id, policy_id, policy, created_at, updated_at, version FROM policies
       WHERE tenant_id = ? AND policy_id > ? ORDER BY policy_id LIMIT ?`,
    ),
    getTargetState: prepare<[string, string], { value: string; version: number; updated_at: number }>(
      db,
      'SELECT value, version, updated_at FROM target_state WHERE tenant_id = ? AND key = ?',
    ),
    insertTargetState: prepare<[string, string, string, number]>(
      db,
      `INSERT INTO target_state (tenant_id, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
       ON CONFLICT DO NOTHING`,
    ),
    updateTargetState: prepare<[string, number, string, string, number]>(
      db,
      `UPDATE target_state SET value = ?, version = version + 1, updated_at = ?
       WHERE tenant_id = ? AND key = ? AND version = ?`,
    ),
    countByStatusOfTenant: prepare<{ tenantId: string }, { status: TaskStatus | 'LIVE'; n: number }>(db, COUNT_BY_STATUS_OF_TENANT),
    countByStatus: prepare<[], { status: TaskStatus | 'LIVE'; n: number }>(db, COUNT_BY_STATUS),
    ping: prepare<[], { ok: number }>(db, 'SELECT 1 AS ok'),
  };
}

/** The prepared statements of one connection. */
export type Statements = ReturnType<typeof prepareStatements>;
