import type { Database } from 'better-sqlite3';
import { TASK_COLUMN_NAMES } from '../sql/task-columns.js';
import type { AttemptCompletion, TaskOutcome } from '../../store/store.js';
import type { AttemptRow } from '../sql/sql-rows.js';
import { ATTEMPT_COLUMNS, ATTEMPT_READ_COLUMNS, TASK_INSERT_COLUMNS, TASK_READ_COLUMNS, TASK_READ_COLUMNS_OF_QUEUE } from './task-row.js';
import { taskIdKey } from '../sql/task-id-params.js';
import type { PolicyRow, SqlValue, TaskParams, TaskRow } from './task-row.js';
import {
  CANCELLED_STATUS,
  CANCEL_AT_ONCE_FROM,
  CANCEL_REQUEST_FROM,
  DUE_STATUS,
  LEASED_STATUS,
  RELEASED_STATUS,
  REPLAYED_STATUS,
  REPLAY_FROM,
  RESCHEDULED_STATUS,
  RESCHEDULE_FROM,
} from '../../store/transition-guards.js';
import { endedAtFor, statusCode, statusIn, statusLiteral } from './status-guards.js';
import { prepareQueueStatements } from './queue-statements.js';
import { prepare } from './prepared.js';

// Every statement of the SQLite store, each with its contract. Prepared once, in `prepareStatements`.
// Statements run once per task or per attempt take positional parameters and return raw rows (arrays): binding an
// object by name and building one object per row cost more than the SQL of a claim or a completion. The others
// keep named parameters (`@name`), which better-sqlite3 requires to be bound, every one.
// Statuses are never typed here: see status-guards.ts.

/** The task columns, in row order (`TASK_INSERT_COLUMNS`): the INSERT's list. Reads select `TASK_READ_COLUMNS`. */
const TASK_COLUMNS = TASK_INSERT_COLUMNS.join(', ');

/**
 * One ready queue's due tasks, earliest due first. Params: `targetKey` (the queue's key, read back as each task's),
 * `queueId`, `now`, `limit` (the queue's share). Returns raw {@link TaskRow}s followed by the rowid
 * ({@link DueRow}). Walks `tasks_due` from the queue's head and stops after `limit` rows: it never scans, and never
 * looks at another queue.
 *
 * A claim reads the rows, then moves each by rowid ({@link CLAIM_ONE}) in the same IMMEDIATE transaction, rather
 * than one `UPDATE … RETURNING`: SQLite buffers RETURNING rows in a temporary table, and measured, that costs a
 * third more per claimed task than reading them first.
 */
export const SELECT_DUE = `
SELECT ${TASK_READ_COLUMNS_OF_QUEUE}, rowid FROM tasks
WHERE queue_id = ? AND ${statusIn([DUE_STATUS])} AND next_attempt_at <= ?
ORDER BY next_attempt_at
LIMIT ?`;

/**
 * Whether a queue has a task due by now. Params: `queueId`, `now`. Returns a row or nothing. One seek into
 * `tasks_due`, which covers it (no table row read).
 */
export const HAS_DUE = `
SELECT 1 FROM tasks
WHERE queue_id = ? AND ${statusIn([DUE_STATUS])} AND next_attempt_at <= ?
LIMIT 1`;

/** A {@link SELECT_DUE} row: the task's columns, then its rowid at {@link ROWID_POSITION}. */
export type DueRow = TaskRow;
/** Where a {@link DueRow} keeps the rowid: after every task column. */
export const ROWID_POSITION = TASK_COLUMN_NAMES.length;

/** Where a row of {@link CANCEL_TASK}, {@link REPLAY_TASK} or {@link RESCHEDULE_TASK} keeps the task's queue number: after every task column. */
export const QUEUE_ID_POSITION = TASK_COLUMN_NAMES.length;

/**
 * Claims one task read by {@link SELECT_DUE}. Params: `workerId`, `leaseExpiresAt`, `now`, `rowid`. Changes nothing
 * (0 changes) unless the task is still due. `markClaimed` (task-row.ts) mirrors its SET list.
 */
export const CLAIM_ONE = `
UPDATE tasks SET status = ${statusLiteral(LEASED_STATUS)}, lease_owner = ?, lease_expires_at = ?,
  fencing_token = fencing_token + 1, version = version + 1, updated_at = ?
WHERE rowid = ? AND ${statusIn([DUE_STATUS])}`;

/**
 * Lapsed leases, earliest first. Params: `now`, `limit`. Returns raw {@link TaskRow}s. A walk of all of
 * `tasks_in_flight` (IN_FLIGHT tasks only, its lease column read from the index; 007-one-in-flight-index.sql), then
 * the rows of the lapsed ones: the reaper runs once per lapse or idle interval, not per claim.
 */
export const FIND_EXPIRED_LEASES = `
SELECT ${TASK_READ_COLUMNS} FROM tasks
WHERE ${statusIn([LEASED_STATUS])} AND lease_expires_at <= @now
ORDER BY lease_expires_at LIMIT @limit`;

/**
 * The earliest lease of any IN_FLIGHT task (NULL: none). No params. Returns `{ at }`. A covering walk of
 * `tasks_in_flight`.
 */
export const NEXT_LEASE_EXPIRY_AT = `SELECT min(lease_expires_at) AS at FROM tasks WHERE ${statusIn([LEASED_STATUS])}`;

// The end of an attempt, fenced by status, token and (for the lease reaper) lapse, in two forms: one for an outcome
// that keeps the task live (PENDING), one for an outcome that ends it, which also writes `ended_at`. A retry must not
// write `ended_at`, or SQLite would rewrite the task's `tasks_live` entry (see 001-init.sql). Both write the outcome's
// `expires_at`: a retry's is NULL over NULL, which costs no index write (`tasks_expiry` holds neither the row before
// nor after: see 011-retention.sql), and a CHECK refuses a live outcome that brings one. Positional parameters:
// this runs once per attempt, and binding an object by name costs more per call than an array.
const COMPLETE_SET = `status = ?, attempt_number = ?, next_attempt_at = ?, run_started_at = ?, last_delay_ms = ?,
  last_error = ?, last_response_status = ?, dead_letter_reason = ?, expires_at = ?,
  lease_owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = ?`;
const COMPLETE_FENCE = `WHERE tenant_id = ? AND task_id = ? AND ${statusIn([LEASED_STATUS])} AND fencing_token = ?
  AND (? IS NULL OR lease_expires_at <= ?) AND (? IS NULL OR cancel_requested = ?)`;

/**
 * Applies an outcome that keeps the task live. Params, in order ({@link completeParams}): the outcome's `status`,
 * `attempt_number`, `next_attempt_at`, `run_started_at`, `last_delay_ms`, `last_error`, `last_response_status`,
 * `dead_letter_reason`, `expires_at` (NULL for a live outcome); `now`; then the fence: `tenantId`, `taskId`,
 * `fencingToken`, `requireLeaseExpiredBy` twice (null: no lapse check), `cancelRequested` twice (null: either; 0 or 1:
 * only if `cancel_requested` is that).
 * Returns `[version, cancel_requested, queue_id]` of the changed row (the queue, to lower its hint and free a slot
 * of its concurrency limit), or nothing when fenced out.
 */
export const COMPLETE_TO_LIVE = `UPDATE tasks SET ${COMPLETE_SET}
${COMPLETE_FENCE}
RETURNING version, cancel_requested, queue_id`;

/**
 * Applies an outcome that ends the task: as {@link COMPLETE_TO_LIVE}, with `now` once more (`ended_at`) after `now`.
 * Returns `[version, cancel_requested, queue_id]` (the queue, to free a slot of its concurrency limit).
 */
export const COMPLETE_TO_ENDED = `UPDATE tasks SET ${COMPLETE_SET}, ended_at = ?
${COMPLETE_FENCE}
RETURNING version, cancel_requested, queue_id`;

/** What {@link COMPLETE_TO_LIVE} and {@link COMPLETE_TO_ENDED} return. */
export type CompletedRow = [version: number, cancelRequested: number, queueId: number];

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
): SqlValue[] {
  const lapse = completion.requireLeaseExpiredBy ?? null;
  const set: SqlValue[] = [
    statusCode(outcome.status),
    outcome.attemptNumber,
    outcome.nextAttemptAt,
    outcome.runStartedAt,
    outcome.lastDelayMs,
    outcome.lastError,
    outcome.lastResponseStatus,
    outcome.deadLetterReason,
    outcome.expiresAt,
    now,
  ];
  if (ends) set.push(now);
  set.push(completion.tenantId, taskIdKey(completion.taskId), completion.fencingToken, lapse, lapse, cancelRequested, cancelRequested);
  return set;
}

// The named transitions of the API (see the port's table). Each is guarded by the statuses core's lifecycle allows
// it from, in its own WHERE: a caller that skipped the state machine is refused by the store. Each returns the
// task as it is after the change, or nothing when the guard refused (the store then reads the task as it is).
const TASK_KEY = 'tenant_id = @tenantId AND task_id = @taskId';

/**
 * `cancelTask`: PENDING → CANCELLED, to be deleted at `expiresAt`. Params: `tenantId`, `taskId`, `now`, `expiresAt`.
 * Returns the raw row after it, then its queue's number ({@link QUEUE_ID_POSITION}: the hint to set exact again).
 */
export const CANCEL_TASK = `
UPDATE tasks SET status = ${statusLiteral(CANCELLED_STATUS)}, next_attempt_at = NULL, updated_at = @now,
  ${endedAtFor(CANCELLED_STATUS, '@now')}, expires_at = @expiresAt, version = version + 1
WHERE ${TASK_KEY} AND ${statusIn(CANCEL_AT_ONCE_FROM)}
RETURNING ${TASK_READ_COLUMNS}, queue_id`;

/** `requestCancel`: IN_FLIGHT, cancel requested. Params: `tenantId`, `taskId`, `now`. Returns the raw row after it. */
export const REQUEST_CANCEL = `
UPDATE tasks SET cancel_requested = 1, updated_at = @now, version = version + 1
WHERE ${TASK_KEY} AND ${statusIn(CANCEL_REQUEST_FROM)}
RETURNING ${TASK_READ_COLUMNS}`;

/**
 * `replayTask`: a dead letter → PENDING, a fresh run, at the expected version; live again, so never purged (no
 * `expires_at`). Params: `tenantId`, `taskId`, `expectedVersion`, `runAttemptOffset`, `runStartedAt`,
 * `nextAttemptAt`, `updatedAt`. Returns the raw row after it, then its queue's number ({@link QUEUE_ID_POSITION}: the
 * hint to lower).
 */
export const REPLAY_TASK = `
UPDATE tasks SET status = ${statusLiteral(REPLAYED_STATUS)}, next_attempt_at = @nextAttemptAt,
  run_attempt_offset = @runAttemptOffset, run_started_at = @runStartedAt, last_delay_ms = 0,
  dead_letter_reason = NULL, cancel_requested = 0, lease_owner = NULL, lease_expires_at = NULL, expires_at = NULL,
  updated_at = @updatedAt, ${endedAtFor(REPLAYED_STATUS, '@updatedAt')}, version = version + 1
WHERE ${TASK_KEY} AND ${statusIn(REPLAY_FROM)} AND version = @expectedVersion
RETURNING ${TASK_READ_COLUMNS}, queue_id`;

/**
 * `rescheduleTask`: a PENDING task due at another time, at the expected version; its attempts, run and budget stay.
 * Params: `tenantId`, `taskId`, `expectedVersion`, `nextAttemptAt`, `updatedAt`. Returns the raw row after it, then its
 * queue's number ({@link QUEUE_ID_POSITION}: the hint to set exact again, as the task may have been its queue's head).
 */
export const RESCHEDULE_TASK = `
UPDATE tasks SET status = ${statusLiteral(RESCHEDULED_STATUS)}, next_attempt_at = @nextAttemptAt, updated_at = @updatedAt,
  version = version + 1
WHERE ${TASK_KEY} AND ${statusIn(RESCHEDULE_FROM)} AND version = @expectedVersion
RETURNING ${TASK_READ_COLUMNS}, queue_id`;

/**
 * Hands one lease back, due now. Params: `tenantId`, `taskId`, `fencingToken`, `now`. Returns `{ queue_id }` of a
 * released task (its queue's hint is lowered), nothing when the token no longer holds the task.
 */
export const RELEASE_LEASE = `
UPDATE tasks SET status = ${statusLiteral(RELEASED_STATUS)}, next_attempt_at = @now, lease_owner = NULL,
  lease_expires_at = NULL, version = version + 1, updated_at = @now
WHERE ${TASK_KEY} AND ${statusIn([LEASED_STATUS])} AND fencing_token = @fencingToken
RETURNING queue_id`;

// Counts by status without reading a table row: covering walks of `tasks_ended` (by status), `tasks_live` and
// `tasks_in_flight` (PENDING is live minus in flight). One statement, so one snapshot: the three agree.
const COUNTS = (tenant: string) => `
SELECT status, count(*) AS n FROM tasks WHERE ${tenant} ended_at IS NOT NULL GROUP BY ${tenant === '' ? 'tenant_id, ' : ''}status
UNION ALL SELECT 'LIVE', count(*) FROM tasks WHERE ${tenant} ended_at IS NULL
UNION ALL SELECT ${statusLiteral(LEASED_STATUS)}, count(*) FROM tasks WHERE ${tenant} ${statusIn([LEASED_STATUS])}`;
/**
 * Params: `tenantId`. Rows `{ status, n }`: one per terminal status present, then `LIVE` and the leased status, each
 * status as its number (see status-guards.ts).
 */
export const COUNT_BY_STATUS_OF_TENANT = COUNTS('tenant_id = @tenantId AND');
/** As {@link COUNT_BY_STATUS_OF_TENANT} over every tenant (a terminal status may come once per tenant). */
export const COUNT_BY_STATUS = COUNTS('');

/**
 * A task id as the statements bind it: its 16 bytes, or NULL for an id no task has (`taskIdKey` of
 * backends/sql/task-id-params.ts).
 */
export type TaskIdParam = Buffer | null;

/** Named parameters of the statements that address one task. */
interface TaskKey {
  tenantId: string;
  taskId: TaskIdParam;
}

/** Creates every fixed statement once. Listings with optional filters are built in `list-tasks.ts`. */
export function prepareStatements(db: Database) {
  return {
    ...prepareQueueStatements(db),
    insertTask: prepare<TaskParams>(
      db,
      `INSERT INTO tasks (${TASK_COLUMNS}, ended_at) VALUES (${TASK_COLUMN_NAMES.map(() => '?').join(', ')}, ?)
       ON CONFLICT (tenant_id, idempotency_key) DO NOTHING`,
    ),
    getTask: prepare<[tenantId: string, taskId: TaskIdParam], TaskRow>(db, `SELECT ${TASK_READ_COLUMNS} FROM tasks WHERE tenant_id = ? AND task_id = ?`, true),
    getTaskByKey: prepare<[string, string], TaskRow>(
      db,
      `SELECT ${TASK_READ_COLUMNS} FROM tasks WHERE tenant_id = ? AND idempotency_key = ?`,
      true,
    ),
    selectDue: prepare<[targetKey: string, queueId: number, now: number, limit: number], DueRow>(db, SELECT_DUE, true),
    hasDue: prepare<[queueId: number, now: number], [1]>(db, HAS_DUE, true),
    claimOne: prepare<[workerId: string, leaseExpiresAt: number, now: number, rowid: number]>(db, CLAIM_ONE),
    findExpiredLeases: prepare<{ now: number; limit: number }, TaskRow>(db, FIND_EXPIRED_LEASES, true),
    nextLeaseExpiryAt: prepare<[], { at: number }>(db, NEXT_LEASE_EXPIRY_AT),
    completeToLive: prepare<SqlValue[], CompletedRow>(db, COMPLETE_TO_LIVE, true),
    completeToEnded: prepare<SqlValue[], CompletedRow>(db, COMPLETE_TO_ENDED, true),
    insertAttempt: prepare<SqlValue[]>(
      db,
      `INSERT INTO attempts (${ATTEMPT_COLUMNS}) VALUES (${ATTEMPT_COLUMNS.split(',')
        .map(() => '?')
        .join(', ')})`,
    ),
    cancelTask: prepare<TaskKey & { now: number; expiresAt: number }, TaskRow>(db, CANCEL_TASK, true),
    requestCancel: prepare<TaskKey & { now: number }, TaskRow>(db, REQUEST_CANCEL, true),
    replayTask: prepare<
      TaskKey & {
        expectedVersion: number;
        runAttemptOffset: number;
        runStartedAt: number | null;
        nextAttemptAt: number;
        updatedAt: number;
      },
      TaskRow
    >(db, REPLAY_TASK, true),
    rescheduleTask: prepare<TaskKey & { expectedVersion: number; nextAttemptAt: number; updatedAt: number }, TaskRow>(
      db,
      RESCHEDULE_TASK,
      true,
    ),
    extendLease: prepare<TaskKey & { fencingToken: number; leaseExpiresAt: number }>(
      db,
      `UPDATE tasks SET lease_expires_at = @leaseExpiresAt, version = version + 1
       WHERE ${TASK_KEY} AND ${statusIn([LEASED_STATUS])} AND fencing_token = @fencingToken`,
    ),
    releaseLease: prepare<TaskKey & { fencingToken: number; now: number }, { queue_id: number }>(db, RELEASE_LEASE),
    listAttempts: prepare<[tenantId: string, taskId: TaskIdParam, after: number, limit: number], AttemptRow>(
      db,
      `SELECT ${ATTEMPT_READ_COLUMNS} FROM attempts
       WHERE tenant_id = ? AND task_id = ? AND attempt_number > ? ORDER BY attempt_number LIMIT ?`,
    ),
    insertPolicy: prepare<PolicyRow>(
      db,
      `INSERT INTO policies (tenant_id, policy_id, policy, callback, created_at, updated_at, version)
       VALUES (@tenant_id, @policy_id, @policy, @callback, @created_at, @updated_at, @version) ON CONFLICT DO NOTHING`,
    ),
    replacePolicy: prepare<PolicyRow, PolicyRow>(
      db,
      `UPDATE policies SET policy = @policy, callback = @callback, updated_at = @updated_at, version = version + 1
       WHERE tenant_id = @tenant_id AND policy_id = @policy_id
       RETURNING tenant_id, policy_id, policy, callback, created_at, updated_at, version`,
    ),
    getPolicy: prepare<[string, string], PolicyRow>(
      db,
      `SELECT tenant_id, policy_id, policy, callback, created_at, updated_at, version FROM policies
       WHERE tenant_id = ? AND policy_id = ?`,
    ),
    listPolicies: prepare<[string, number], PolicyRow>(
      db,
      `SELECT tenant_id, policy_id, policy, callback, created_at, updated_at, version FROM policies
       WHERE tenant_id = ? ORDER BY policy_id LIMIT ?`,
    ),
    listPoliciesAfter: prepare<[string, string, number], PolicyRow>(
      db,
      `SELECT tenant_id, policy_id, policy, callback, created_at, updated_at, version FROM policies
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
    countByStatusOfTenant: prepare<{ tenantId: string }, { status: number | 'LIVE'; n: number }>(db, COUNT_BY_STATUS_OF_TENANT),
    countByStatus: prepare<[], { status: number | 'LIVE'; n: number }>(db, COUNT_BY_STATUS),
    ping: prepare<[], { ok: number }>(db, 'SELECT 1 AS ok'),
  };
}

/** The prepared statements of one connection. */
export type Statements = ReturnType<typeof prepareStatements>;
