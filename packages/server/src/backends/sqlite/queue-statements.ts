import type { Database, Statement } from 'better-sqlite3';
import { prepare } from './prepared.js';
import { DUE_STATUS } from '../../store/transition-guards.js';
import { statusIn } from './status-guards.js';

// The statements on `target_queues` (see 002-targets.sql): ready queues for claims, their due-time hints, the
// target gate. Each reads or writes one queue by its key, or walks `target_queues_ready`.

/**
 * The ready queues: not held, with a task due by now (as far as the hints tell). Params: `now`. Returns raw
 * `[tenant_id, target_key]` rows, in no particular order (the claim puts them in ring order). Walks
 * `target_queues_ready` up to `now`: held, idle and not-yet-due queues are never read.
 */
export const READY_QUEUES = `SELECT tenant_id, target_key FROM target_queues WHERE ready_at <= ?`;

/**
 * The queues in the order of their hinted ready time, each with its true head: for `nextDueAt`, which stops reading
 * early. No params. Returns raw `[ready_at, held_until, head]` rows, `head` being the due time of the queue's
 * earliest PENDING task (NULL: none), one seek into `tasks_due` per row read.
 */
export const READY_TIMES = `
SELECT q.ready_at, q.held_until, (
  SELECT t.next_attempt_at FROM tasks t
  WHERE t.tenant_id = q.tenant_id AND t.target_key = q.target_key AND ${statusIn([DUE_STATUS], 't.status')}
  ORDER BY t.next_attempt_at LIMIT 1
) AS head
FROM target_queues q WHERE q.ready_at IS NOT NULL ORDER BY q.ready_at`;

/**
 * Sets a queue's hint to the exact due time of its earliest PENDING task (NULL: none), read from the queue's head
 * in `tasks_due`. Params: `tenantId`, `targetKey`, then both again. For a queue that a claim found short of its share.
 */
export const REFRESH_HINT = `
UPDATE target_queues SET next_due_at = (
  SELECT next_attempt_at FROM tasks
  WHERE tenant_id = ? AND target_key = ? AND ${statusIn([DUE_STATUS])}
  ORDER BY next_attempt_at LIMIT 1
)
WHERE tenant_id = ? AND target_key = ?`;

/**
 * Creates a queue's row if it has none, and lowers its hint to `dueAt` when that is earlier (a null `dueAt` lowers
 * nothing). Params: `tenantId`, `targetKey`, `dueAt`. An unchanged queue is not written.
 */
export const LOWER_HINT = `
INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)
ON CONFLICT (tenant_id, target_key) DO UPDATE SET next_due_at = excluded.next_due_at
WHERE excluded.next_due_at IS NOT NULL
  AND (target_queues.next_due_at IS NULL OR excluded.next_due_at < target_queues.next_due_at)`;

/** Holds a target until `until`, replacing an earlier hold. Params: `tenantId`, `targetKey`, `until`, `now`. */
export const HOLD_TARGET = `
INSERT INTO target_queues (tenant_id, target_key, held_until, hold_changed_at) VALUES (?, ?, ?, ?)
ON CONFLICT (tenant_id, target_key) DO UPDATE SET held_until = excluded.held_until, hold_changed_at = excluded.hold_changed_at`;

/** Ends a target's hold. Params: `now`, `tenantId`, `targetKey`. A queue not held (or not known) is not written. */
export const RELEASE_TARGET = `
UPDATE target_queues SET held_until = NULL, hold_changed_at = ?
WHERE tenant_id = ? AND target_key = ? AND held_until IS NOT NULL`;

/** Prepares the statements above on `db`, once. */
export function prepareQueueStatements(db: Database) {
  return {
    readyQueues: prepare<[now: number], [tenantId: string, targetKey: string]>(db, READY_QUEUES, true),
    readyTimes: prepareIterable<[readyAt: number, heldUntil: number | null, head: number | null]>(db, READY_TIMES),
    refreshHint: prepare<[tenantId: string, targetKey: string, tenantId: string, targetKey: string]>(db, REFRESH_HINT),
    lowerHint: prepare<[tenantId: string, targetKey: string, dueAt: number | null]>(db, LOWER_HINT),
    holdTarget: prepare<[tenantId: string, targetKey: string, until: number, now: number]>(db, HOLD_TARGET),
    releaseTarget: prepare<[now: number, tenantId: string, targetKey: string]>(db, RELEASE_TARGET),
  };
}

/** A raw statement without parameters whose rows are read one at a time (`iterate`), so a reader can stop early. */
function prepareIterable<R>(db: Database, sql: string): { iterate(): IterableIterator<R> } {
  return (db.prepare(sql) as Statement<[], R>).raw(true);
}
