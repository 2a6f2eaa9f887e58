import type { Database, Transaction } from 'better-sqlite3';
import type { Page } from '../../domain/task.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import { DUE_COUNT_CAP, type PageRequest, type TargetRef, type TargetView } from '../../store/store.js';
import { DUE_STATUS, LEASED_STATUS } from '../../store/transition-guards.js';
import { prepare, type Prepared } from './prepared.js';
import { IN_FLIGHT_OF } from './queue-statements.js';
import { statusIn } from './status-guards.js';

// The operators' view of targets (`AdminReads.getTarget` / `listTargets`): one row of `target_queues` per target,
// then, per target, the true head of its queue and its due tasks counted from `tasks_due` up to `DUE_COUNT_CAP`
// (never a walk of a backlog); its in-flight tasks come from the tenant's `tasks_in_flight` range, read once per
// call (IN_FLIGHT tasks only: as many as the instances' concurrency; the index holds their queues' numbers). Each
// call reads one snapshot.

const QUEUE_COLUMNS = `tenant_id, target_key, rate_per_second, burst, max_in_flight, held_until, throttled_until, full_until,
  queue_id`;

/** One queue's row by key. Params: `tenantId`, `targetKey`. Returns a raw {@link QueueRow} or nothing. */
export const GET_QUEUE = `SELECT ${QUEUE_COLUMNS} FROM target_queues WHERE tenant_id = ? AND target_key = ?`;

/** A tenant's queues in key order, from the start. Params: `tenantId`, `limit`. Returns raw {@link QueueRow}s. */
export const LIST_QUEUES = `SELECT ${QUEUE_COLUMNS} FROM target_queues WHERE tenant_id = ? ORDER BY target_key LIMIT ?`;

/** As {@link LIST_QUEUES}, after a key. Params: `tenantId`, `afterTargetKey`, `limit`. */
export const LIST_QUEUES_AFTER = `
SELECT ${QUEUE_COLUMNS} FROM target_queues WHERE tenant_id = ? AND target_key > ? ORDER BY target_key LIMIT ?`;

/** The due time of a queue's earliest PENDING task (NULL: none). Params: `queueId`. One seek into `tasks_due`. */
export const QUEUE_HEAD = `
SELECT min(next_attempt_at) FROM tasks WHERE queue_id = ? AND ${statusIn([DUE_STATUS])}`;

/**
 * A queue's PENDING tasks due by `now`, counted up to a cap. Params: `queueId`, `now`, `cap`. A covering walk of
 * `tasks_due` that stops at the cap.
 */
export const COUNT_DUE = `
SELECT count(*) FROM (
  SELECT 1 FROM tasks WHERE queue_id = ? AND ${statusIn([DUE_STATUS])} AND next_attempt_at <= ? LIMIT ?
)`;

/**
 * The queue numbers of a tenant's IN_FLIGHT tasks, one per task, for a page of targets to count theirs from. Params:
 * `tenantId`. One covering walk of the tenant's range of `tasks_in_flight`, which holds each task's queue.
 */
export const IN_FLIGHT_QUEUES = `SELECT queue_id FROM tasks WHERE tenant_id = ? AND ${statusIn([LEASED_STATUS])}`;

/** A {@link GET_QUEUE} row. */
type QueueRow = [
  tenantId: string,
  targetKey: string,
  ratePerSecond: number | null,
  burst: number | null,
  maxInFlight: number | null,
  heldUntil: number | null,
  throttledUntil: number | null,
  fullUntil: number | null,
  queueId: number,
];

/** Where a {@link QueueRow} keeps the queue's number. */
const QUEUE_ID = 8;

/** The target reads of one connection, prepared once. */
export class TargetViews {
  readonly #getQueue: Prepared<[tenantId: string, targetKey: string], QueueRow>;
  readonly #listQueues: Prepared<[tenantId: string, limit: number], QueueRow>;
  readonly #listQueuesAfter: Prepared<[tenantId: string, afterTargetKey: string, limit: number], QueueRow>;
  readonly #head: Prepared<[queueId: number], [head: number | null]>;
  readonly #countDue: Prepared<[queueId: number, now: number, cap: number], [count: number]>;
  readonly #inFlightOf: Prepared<[now: number, tenantId: string, queueId: number], [count: number, nextLeaseExpiry: number | null]>;
  readonly #inFlightQueues: Prepared<[tenantId: string], [queueId: number]>;
  /** Deferred transactions: each call reads one snapshot, so a target's counts agree with its row. */
  readonly #get: Transaction<(target: TargetRef, now: number) => TargetView | undefined>;
  readonly #list: Transaction<(tenantId: string, page: PageRequest, now: number) => Page<TargetView>>;

  constructor(db: Database) {
    this.#getQueue = prepare<[string, string], QueueRow>(db, GET_QUEUE, true);
    this.#listQueues = prepare<[string, number], QueueRow>(db, LIST_QUEUES, true);
    this.#listQueuesAfter = prepare<[string, string, number], QueueRow>(db, LIST_QUEUES_AFTER, true);
    this.#head = prepare<[number], [number | null]>(db, QUEUE_HEAD, true);
    this.#countDue = prepare<[number, number, number], [number]>(db, COUNT_DUE, true);
    this.#inFlightOf = prepare<[number, string, number], [number, number | null]>(db, IN_FLIGHT_OF, true);
    this.#inFlightQueues = prepare<[string], [number]>(db, IN_FLIGHT_QUEUES, true);
    this.#get = db.transaction((target: TargetRef, now: number) => {
      const row = this.#getQueue.get(target.tenantId, target.targetKey);
      if (row === undefined) return undefined;
      return this.#view(row, now, this.#inFlightOf.get(now, target.tenantId, row[QUEUE_ID])?.[0] ?? 0);
    });
    this.#list = db.transaction((tenantId: string, page: PageRequest, now: number) => {
      const rows =
        page.cursor === undefined
          ? this.#listQueues.all(tenantId, page.limit + 1)
          : this.#listQueuesAfter.all(tenantId, decodeCursor('targets', page.cursor, 's')[0] as string, page.limit + 1);
      const inFlight = new Map<number, number>();
      if (rows.length > 0) {
        for (const [queueId] of this.#inFlightQueues.all(tenantId)) inFlight.set(queueId, (inFlight.get(queueId) ?? 0) + 1);
      }
      const items = rows.slice(0, page.limit).map((row) => this.#view(row, now, inFlight.get(row[QUEUE_ID]) ?? 0));
      const last = items[items.length - 1];
      return rows.length > page.limit && last !== undefined
        ? { items, nextCursor: encodeCursor('targets', [last.targetKey]) }
        : { items };
    });
  }

  /** One target as of `now`, or undefined when no task named it and it was never held or limited. */
  get(target: TargetRef, now: number): TargetView | undefined {
    return this.#get(target, now);
  }

  /** A page of a tenant's targets in key order; the cursor is the page's last key. */
  list(tenantId: string, page: PageRequest, now: number): Page<TargetView> {
    return this.#list(tenantId, page, now);
  }

  /** A queue's row as the port's view: gates as of `now` (a gate past `now` is none), its head and due count. */
  #view(row: QueueRow, now: number, inFlight: number): TargetView {
    const [tenantId, targetKey, ratePerSecond, burst, maxInFlight, heldUntil, throttledUntil, fullUntil, queueId] = row;
    const throttled = Math.max(throttledUntil ?? -Infinity, fullUntil ?? -Infinity);
    return {
      tenantId,
      targetKey,
      ratePerSecond,
      burst,
      maxInFlight,
      heldUntil: heldUntil !== null && heldUntil > now ? heldUntil : null,
      throttledUntil: throttled > now ? throttled : null,
      nextDueAt: this.#head.get(queueId)?.[0] ?? null,
      inFlight,
      dueTasks: this.#countDue.get(queueId, now, DUE_COUNT_CAP)?.[0] ?? 0,
    };
  }
}
