import type { Database, Statement } from 'better-sqlite3';
import { prepare } from './prepared.js';
import { DUE_STATUS, LEASED_STATUS } from '../../store/transition-guards.js';
import { statusIn } from './status-guards.js';

// The statements on `target_queues` (see 002-targets.sql, 003-target-limits.sql and 010-task-keys-as-numbers.sql):
// ready queues for claims, their due-time hints, the target gate and limits. Each reads or writes one queue by its
// number (`queue_id`, which its tasks keep) or by its key, or walks `target_queues_ready` (and, for a queue with a
// concurrency limit, its in-flight tasks).

/**
 * The ready queues: not held nor throttled, with a task due by now (as far as the hints tell), each with its limits
 * and bucket. Params: `now`. Returns raw {@link ReadyQueueRow}s, in no particular order (the claim puts them in ring
 * order). Walks `target_queues_ready` up to `now`: held, throttled, idle and not-yet-due queues are never read. The
 * limit columns cost nothing more: SQLite reads each entry's row anyway (see 002-targets.sql).
 */
export const READY_QUEUES = `
SELECT tenant_id, target_key, rate_per_second, burst, max_in_flight, tokens, tokens_at, queue_id
FROM target_queues WHERE ready_at <= ?`;

/** A {@link READY_QUEUES} row. The limits are null for a queue without them; tokens are set exactly with a rate. */
export type ReadyQueueRow = [
  tenantId: string,
  targetKey: string,
  ratePerSecond: number | null,
  burst: number | null,
  maxInFlight: number | null,
  tokens: number | null,
  tokensAt: number | null,
  queueId: number,
];

/** Where a {@link ReadyQueueRow} keeps the queue's number. */
export const READY_QUEUE_ID = 7;

/**
 * The queues in the order of their hinted ready time, each with its gates and its true head: for `nextDueAt`, which
 * stops reading early. No params. Returns raw `[ready_at, held_until, throttled_until, full_until, head]` rows,
 * `head` being the due time of the queue's earliest PENDING task (NULL: none), one seek into `tasks_due` per row read.
 */
export const READY_TIMES = `
SELECT q.ready_at, q.held_until, q.throttled_until, q.full_until, (
  SELECT t.next_attempt_at FROM tasks t
  WHERE t.queue_id = q.queue_id AND ${statusIn([DUE_STATUS], 't.status')}
  ORDER BY t.next_attempt_at LIMIT 1
) AS head
FROM target_queues q WHERE q.ready_at IS NOT NULL ORDER BY q.ready_at`;

/**
 * Sets a queue's hint to the exact due time of its earliest PENDING task (NULL: none), read from the queue's head
 * in `tasks_due`. Params: `queueId`, twice. For a queue that a claim found short of its share, or a cancel.
 */
export const REFRESH_HINT = `
UPDATE target_queues SET next_due_at = (
  SELECT next_attempt_at FROM tasks
  WHERE queue_id = ? AND ${statusIn([DUE_STATUS])}
  ORDER BY next_attempt_at LIMIT 1
)
WHERE queue_id = ?`;

/** A queue's number, by its key. Params: `tenantId`, `targetKey`. Returns `[queue_id]` or nothing (no such queue). */
export const QUEUE_ID = 'SELECT queue_id FROM target_queues WHERE tenant_id = ? AND target_key = ?';

/**
 * Creates a queue's row, its hint empty. Params: `tenantId`, `targetKey`. Returns `[queue_id]`, a number no other
 * queue has had. For a queue {@link QUEUE_ID} did not find, in the same transaction.
 */
export const ADD_QUEUE = 'INSERT INTO target_queues (tenant_id, target_key) VALUES (?, ?) RETURNING queue_id';

/**
 * Lowers a queue's hint to `dueAt` when that is earlier. Named params: `queueId`, `dueAt`. An unchanged queue is not
 * written: a lookup by number.
 */
export const LOWER_HINT = `
UPDATE target_queues SET next_due_at = @dueAt
WHERE queue_id = @queueId AND (next_due_at IS NULL OR @dueAt < next_due_at)`;

/**
 * Lowers a queue's hint to `dueAt` when that is earlier (a null `dueAt` lowers nothing), and ends its in-flight
 * throttle (`full_until`): for the moves that take tasks out of IN_FLIGHT (completions, reaped leases, leases handed
 * back), once per queue per call. Named params: `queueId`, `dueAt`. A queue with nothing to lower and no in-flight
 * throttle (always so for a queue without a concurrency limit) is looked up by number and not written.
 */
export const LOWER_HINT_AND_FREE = `
UPDATE target_queues SET
  next_due_at = CASE
    WHEN @dueAt IS NOT NULL AND (next_due_at IS NULL OR @dueAt < next_due_at) THEN @dueAt
    ELSE next_due_at END,
  full_until = NULL
WHERE queue_id = @queueId
  AND (full_until IS NOT NULL OR (@dueAt IS NOT NULL AND (next_due_at IS NULL OR @dueAt < next_due_at)))`;

/**
 * Holds a target until `until`, or until the later hold it already has (holds extend, never shorten). Params:
 * `tenantId`, `targetKey`, `until`, `now`. A hold that would not extend the current one writes nothing.
 */
export const HOLD_TARGET = `
INSERT INTO target_queues (tenant_id, target_key, held_until, hold_changed_at) VALUES (?, ?, ?, ?)
ON CONFLICT (tenant_id, target_key) DO UPDATE SET held_until = excluded.held_until, hold_changed_at = excluded.hold_changed_at
WHERE target_queues.held_until IS NULL OR excluded.held_until > target_queues.held_until`;

/** Ends a target's hold. Params: `now`, `tenantId`, `targetKey`. A queue not held (or not known) is not written. */
export const RELEASE_TARGET = `
UPDATE target_queues SET held_until = NULL, hold_changed_at = ?
WHERE tenant_id = ? AND target_key = ? AND held_until IS NOT NULL`;

// The limits of a target (see 003-target-limits.sql and target-limits.ts).

/**
 * A queue's IN_FLIGHT tasks: how many, and the earliest lease among them that lapses after `now` (NULL: none).
 * Params: `now`, `tenantId`, `queueId`. Returns a raw `[count, nextLeaseExpiry]` row. A covering walk of the
 * tenant's range of `tasks_in_flight` (IN_FLIGHT tasks only: as many as the instances' concurrency), whose entries
 * hold each task's queue and lease (007-one-in-flight-index.sql, 010-task-keys-as-numbers.sql): no task row is read.
 * Run only for a queue with a concurrency limit, so an unlimited queue never pays for it.
 */
export const IN_FLIGHT_OF = `
SELECT count(*), min(CASE WHEN lease_expires_at > ? THEN lease_expires_at END) FROM tasks
WHERE tenant_id = ? AND queue_id = ? AND ${statusIn([LEASED_STATUS])}`;

/**
 * Writes what a claim left of a limited queue's gate: its bucket and both throttles (see target-limits.ts). Params:
 * `tokens`, `tokensAt`, `throttledUntil`, `fullUntil`, `queueId`.
 */
export const SET_GATE = `
UPDATE target_queues SET tokens = ?, tokens_at = ?, throttled_until = ?, full_until = ?
WHERE queue_id = ?`;

/** A queue's rate limit and bucket. Params: `tenantId`, `targetKey`. Returns a raw {@link BucketRow} or nothing. */
export const BUCKET_OF = `
SELECT rate_per_second, burst, tokens, tokens_at FROM target_queues WHERE tenant_id = ? AND target_key = ?`;

/** A {@link BUCKET_OF} row. */
export type BucketRow = [ratePerSecond: number | null, burst: number | null, tokens: number | null, tokensAt: number | null];

/**
 * Sets a target's limits and bucket, creating its queue row if it has none, and ends its in-flight throttle (the
 * next claim counts again, against the new limit). Params: `tenantId`, `targetKey`, `ratePerSecond`, `burst`,
 * `maxInFlight`, `now`, `tokens`, `tokensAt`, `throttledUntil`.
 */
export const LIMIT_TARGET = `
INSERT INTO target_queues (tenant_id, target_key, rate_per_second, burst, max_in_flight, limits_changed_at,
  tokens, tokens_at, throttled_until)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, target_key) DO UPDATE SET rate_per_second = excluded.rate_per_second, burst = excluded.burst,
  max_in_flight = excluded.max_in_flight, limits_changed_at = excluded.limits_changed_at, tokens = excluded.tokens,
  tokens_at = excluded.tokens_at, throttled_until = excluded.throttled_until, full_until = NULL`;

/** Prepares the statements above on `db`, once. */
export function prepareQueueStatements(db: Database) {
  return {
    readyQueues: prepare<[now: number], ReadyQueueRow>(db, READY_QUEUES, true),
    readyTimes: prepareIterable<
      [readyAt: number, heldUntil: number | null, throttledUntil: number | null, fullUntil: number | null, head: number | null]
    >(db, READY_TIMES),
    refreshHint: prepare<[queueId: number, queueId: number]>(db, REFRESH_HINT),
    queueId: prepare<[tenantId: string, targetKey: string], [queueId: number]>(db, QUEUE_ID, true),
    addQueue: prepare<[tenantId: string, targetKey: string], [queueId: number]>(db, ADD_QUEUE, true),
    lowerHint: prepare<{ queueId: number; dueAt: number }>(db, LOWER_HINT),
    lowerHintAndFree: prepare<{ queueId: number; dueAt: number | null }>(db, LOWER_HINT_AND_FREE),
    holdTarget: prepare<[tenantId: string, targetKey: string, until: number, now: number]>(db, HOLD_TARGET),
    releaseTarget: prepare<[now: number, tenantId: string, targetKey: string]>(db, RELEASE_TARGET),
    inFlightOf: prepare<[now: number, tenantId: string, queueId: number], [count: number, nextLeaseExpiry: number | null]>(
      db,
      IN_FLIGHT_OF,
      true,
    ),
    setGate: prepare<
      [tokens: number | null, tokensAt: number | null, throttledUntil: number | null, fullUntil: number | null, queueId: number]
    >(db, SET_GATE),
    bucketOf: prepare<[tenantId: string, targetKey: string], BucketRow>(db, BUCKET_OF, true),
    limitTarget: prepare<
      [
        tenantId: string,
        targetKey: string,
        ratePerSecond: number | null,
        burst: number | null,
        maxInFlight: number | null,
        now: number,
        tokens: number | null,
        tokensAt: number | null,
        throttledUntil: number | null,
      ]
    >(db, LIMIT_TARGET),
  };
}

/** A raw statement without parameters whose rows are read one at a time (`iterate`), so a reader can stop early. */
function prepareIterable<R>(db: Database, sql: string): { iterate(): IterableIterator<R> } {
  return (db.prepare(sql) as Statement<[], R>).raw(true);
}

/** The prepared statements on `target_queues` (and a limited queue's in-flight count). */
export type QueueStatements = ReturnType<typeof prepareQueueStatements>;
