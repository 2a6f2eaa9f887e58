import type { Database } from 'better-sqlite3';
import type { TaskStatus } from '@retryd/core';
import type { AttemptCompletion, TaskOutcome, TaskPatch } from '../../store/store.js';
import { ATTEMPT_COLUMNS, TASK_COLUMNS } from './task-row.js';
import type { AttemptRow, PolicyRow, TaskParams, TaskRow } from './task-row.js';

// Every statement of the SQLite store, each with its contract. Prepared once, in `prepareStatements`.
// Parameters are named (`@name`); better-sqlite3 requires every one of them to be bound.

const taskValues = TASK_COLUMNS.split(',')
  .map((column) => `@${column.trim()}`)
  .join(', ');

/**
 * Claims due tasks. Params: `now`, `limit`, `workerId`, `leaseExpiresAt`. Returns the claimed rows in no
 * particular order (RETURNING does not keep the subquery's order; the caller sorts).
 * The subquery walks `tasks_due` from its start and stops after `limit` rows: it never scans.
 */
export const CLAIM_DUE = `
UPDATE tasks
SET status = 'IN_FLIGHT', lease_owner = @workerId, lease_expires_at = @leaseExpiresAt,
    fencing_token = fencing_token + 1, version = version + 1, updated_at = @now
WHERE rowid IN (
  SELECT rowid FROM tasks
  WHERE status = 'PENDING' AND next_attempt_at <= @now
  ORDER BY next_attempt_at
  LIMIT @limit)
RETURNING ${TASK_COLUMNS}`;

/** The first entry of `tasks_due`. No params. Returns `{ at }` or nothing. */
export const NEXT_DUE_AT = `
SELECT next_attempt_at AS at FROM tasks WHERE status = 'PENDING' ORDER BY next_attempt_at LIMIT 1`;

/** Lapsed leases through `tasks_lease`. Params: `now`, `limit`. */
export const FIND_EXPIRED_LEASES = `
SELECT ${TASK_COLUMNS} FROM tasks
WHERE status = 'IN_FLIGHT' AND lease_expires_at <= @now
ORDER BY lease_expires_at LIMIT @limit`;

/** The first entry of `tasks_lease`. No params. Returns `{ at }` or nothing. */
export const NEXT_LEASE_EXPIRY_AT = `
SELECT lease_expires_at AS at FROM tasks WHERE status = 'IN_FLIGHT' ORDER BY lease_expires_at LIMIT 1`;

// The end of an attempt, fenced by status, token and (for the lease reaper) lapse. The `c_*` values apply
// instead of the plain ones when `hasCancel = 1` and a cancel was requested; SET reads the row as it was.
const outcomeFields = [
  'status',
  'attempt_number',
  'next_attempt_at',
  'run_started_at',
  'last_delay_ms',
  'last_error',
  'last_response_status',
  'dead_letter_reason',
] as const;

/**
 * Params: `tenantId`, `taskId`, `fencingToken`, `requireLeaseExpiredBy` (null: no lapse check), `now`,
 * `hasCancel`, and each outcome field both plain and `c_`-prefixed. Returns the changed row, or nothing when
 * fenced out.
 */
export const COMPLETE_ATTEMPT = `
UPDATE tasks SET
  ${outcomeFields
    .map((f) => `${f} = CASE WHEN @hasCancel = 1 AND cancel_requested = 1 THEN @c_${f} ELSE @${f} END`)
    .join(',\n  ')},
  lease_owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = @now
WHERE tenant_id = @tenantId AND task_id = @taskId AND status = 'IN_FLIGHT' AND fencing_token = @fencingToken
  AND (@requireLeaseExpiredBy IS NULL OR lease_expires_at <= @requireLeaseExpiredBy)
RETURNING ${TASK_COLUMNS}`;

/** The outcome half of {@link COMPLETE_ATTEMPT}'s parameters: each field plain and `c_`-prefixed. */
export type OutcomeParams = {
  [F in (typeof outcomeFields)[number] as F | `c_${F}`]: F extends 'status' ? TaskStatus : number | string | null;
};

/** All named parameters of {@link COMPLETE_ATTEMPT}. */
export interface CompleteParams extends OutcomeParams {
  tenantId: string;
  taskId: string;
  fencingToken: number;
  requireLeaseExpiredBy: number | null;
  now: number;
  hasCancel: 0 | 1;
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

/** Params: see {@link PatchParams}. Returns the changed row, or nothing on a version mismatch or absent task. */
export const UPDATE_TASK = `
UPDATE tasks SET
  ${patchFields.map((f) => `${f} = CASE WHEN @set_${f} = 1 THEN @${f} ELSE ${f} END`).join(',\n  ')},
  lease_owner = CASE WHEN @set_status = 1 AND @status <> 'IN_FLIGHT' THEN NULL ELSE lease_owner END,
  lease_expires_at = CASE WHEN @set_status = 1 AND @status <> 'IN_FLIGHT' THEN NULL ELSE lease_expires_at END,
  version = version + 1
WHERE tenant_id = @tenantId AND task_id = @taskId AND version = @expectedVersion
RETURNING ${TASK_COLUMNS}`;

const patchColumns: { readonly [K in keyof Required<TaskPatch>]: PatchField } = {
  status: 'status',
  nextAttemptAt: 'next_attempt_at',
  cancelRequested: 'cancel_requested',
  runAttemptOffset: 'run_attempt_offset',
  runStartedAt: 'run_started_at',
  lastDelayMs: 'last_delay_ms',
  deadLetterReason: 'dead_letter_reason',
  lastError: 'last_error',
  lastResponseStatus: 'last_response_status',
  updatedAt: 'updated_at',
};

/** Binds a patch to {@link UPDATE_TASK}: fields absent from `patch` keep their stored value. */
export function patchParams(tenantId: string, taskId: string, expectedVersion: number, patch: TaskPatch): PatchParams {
  const params: Record<string, string | number | null> = { tenantId, taskId, expectedVersion };
  for (const [property, column] of Object.entries(patchColumns) as [keyof TaskPatch, PatchField][]) {
    const value = patch[property];
    params[`set_${column}`] = value === undefined ? 0 : 1;
    params[column] = value === undefined ? null : typeof value === 'boolean' ? Number(value) : value;
  }
  return params as PatchParams;
}

/** Binds one completion to {@link COMPLETE_ATTEMPT}. */
export function completeParams(completion: AttemptCompletion, now: number): CompleteParams {
  // Plain literals on purpose: this runs once per attempt, and spreads or Object.fromEntries here cost more than
  // the SQL statement itself.
  const n = completion.next;
  const c = completion.ifCancelRequested ?? n;
  return {
    status: n.status,
    attempt_number: n.attemptNumber,
    next_attempt_at: n.nextAttemptAt,
    run_started_at: n.runStartedAt,
    last_delay_ms: n.lastDelayMs,
    last_error: n.lastError,
    last_response_status: n.lastResponseStatus,
    dead_letter_reason: n.deadLetterReason,
    c_status: c.status,
    c_attempt_number: c.attemptNumber,
    c_next_attempt_at: c.nextAttemptAt,
    c_run_started_at: c.runStartedAt,
    c_last_delay_ms: c.lastDelayMs,
    c_last_error: c.lastError,
    c_last_response_status: c.lastResponseStatus,
    c_dead_letter_reason: c.deadLetterReason,
    tenantId: completion.tenantId,
    taskId: completion.taskId,
    fencingToken: completion.fencingToken,
    requireLeaseExpiredBy: completion.requireLeaseExpiredBy ?? null,
    now,
    hasCancel: completion.ifCancelRequested === undefined ? 0 : 1,
  };
}

interface LeaseParams {
  tenantId: string;
  taskId: string;
  fencingToken: number;
}

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

/** Creates every fixed statement once. Listings with optional filters are built in `list-tasks.ts`. */
export function prepareStatements(db: Database) {
  return {
    insertTask: prepare<TaskParams>(
      db,
      `INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${taskValues}) ON CONFLICT (tenant_id, idempotency_key) DO NOTHING`,
    ),
    getTask: prepare<[string, string], TaskRow>(
      db,
      `SELECT ${TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND task_id = ?`,
    ),
    getTaskByKey: prepare<[string, string], TaskRow>(
      db,
      `SELECT ${TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND idempotency_key = ?`,
    ),
    updateTask: prepare<PatchParams, TaskRow>(db, UPDATE_TASK),
    claimDue: prepare<{ now: number; limit: number; workerId: string; leaseExpiresAt: number }, TaskRow>(
      db,
      CLAIM_DUE,
    ),
    nextDueAt: prepare<[], { at: number }>(db, NEXT_DUE_AT),
    findExpiredLeases: prepare<{ now: number; limit: number }, TaskRow>(db, FIND_EXPIRED_LEASES),
    nextLeaseExpiryAt: prepare<[], { at: number }>(db, NEXT_LEASE_EXPIRY_AT),
    completeAttempt: prepare<CompleteParams, TaskRow>(db, COMPLETE_ATTEMPT),
    insertAttempt: prepare<AttemptRow>(
      db,
      `INSERT INTO attempts (${ATTEMPT_COLUMNS}) VALUES (${ATTEMPT_COLUMNS.split(',')
        .map((c) => `@${c.trim()}`)
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
    // Both counts walk `tasks_by_status` in (tenant_id, status) order, so GROUP BY needs no sort.
    countByStatusOfTenant: prepare<[string], { status: TaskStatus; n: number }>(
      db,
      'SELECT status, count(*) AS n FROM tasks WHERE tenant_id = ? GROUP BY status',
    ),
    countByStatus: prepare<[], { status: TaskStatus; n: number }>(
      db,
      'SELECT status, count(*) AS n FROM tasks GROUP BY tenant_id, status',
    ),
    ping: prepare<[], { ok: number }>(db, 'SELECT 1 AS ok'),
  };
}

/** The prepared statements of one connection. */
export type Statements = ReturnType<typeof prepareStatements>;
