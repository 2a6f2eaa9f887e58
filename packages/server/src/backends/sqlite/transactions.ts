import type { Database, Transaction } from 'better-sqlite3';
import { isLive } from '@retryd/core';
import type { AttemptLog, RetryTask } from '../../domain/task.js';
import { claimShares, dealRoundRobin, keepWithinRooms, ringOrder, roomOf } from '../../store/claim-shares.js';
import type {
  AttemptCompletion,
  ClaimOptions,
  CompletionResult,
  InsertResult,
  LeaseRef,
  ReplayChange,
  RescheduleChange,
  TargetLimits,
  TargetRef,
  TaskOutcome,
  TaskRef,
} from '../../store/store.js';
import { DuplicateAttemptError } from '../../store/store-errors.js';
import type { JsonCache } from '../../store/json-cache.js';
import { QueueLowering, type LowerHint } from './queue-hints.js';
import { READY_QUEUE_ID, type ReadyQueueRow } from './queue-statements.js';
import { applyLimits, closeGate, isLimited, openGate, type Gate } from './target-limits.js';
import { QUEUE_ID_POSITION, ROWID_POSITION, completeParams } from './statements.js';
import type { CompletedRow, DueRow, Statements } from './statements.js';
import { DUE_STATUS, LEASED_STATUS } from '../../store/transition-guards.js';
import { attemptToParams, markClaimed, rowPosition, taskFromRow, taskToParams } from './task-row.js';
import type { TaskRow } from './task-row.js';
import { taskIdKey } from '../sql/task-id-params.js';

// The multi-statement writes of the SQLite store: claims, completions, inserts, lease hand-backs and replays, each
// one transaction with the due-time hints of the target queues it touches (see queue-hints.ts).

const TENANT_ID = rowPosition('tenantId');
const TARGET_KEY = rowPosition('targetKey');
const TASK_ID = rowPosition('taskId');

/**
 * The store's transactions, each created once (better-sqlite3 builds several wrapper functions per `transaction()`).
 * Each runs as `.immediate(…)`: it takes the write lock at BEGIN, so two processes on one file never both read
 * then both write, and a queue's hint is never read by one and lowered by another in between.
 */
export function prepareTransactions(db: Database, s: Statements, json: JsonCache): Transactions {
  const lower: LowerHint = (queueId, dueAt) => {
    if (dueAt !== null) s.lowerHint.run({ queueId, dueAt });
  };
  // For the moves out of IN_FLIGHT: the hint lowered as above, and the queue's in-flight throttle ended.
  const lowerAndFree: LowerHint = (queueId, dueAt) => s.lowerHintAndFree.run({ queueId, dueAt });
  return {
    /**
     * Inserts the new tasks, each with its queue's number: every queue they belong to gets its row first (a task
     * found to be a duplicate may so leave a queue with no task, as a held or limited target is), and its hint
     * lowered to their earliest due.
     */
    insert: db.transaction((tasks: readonly RetryTask[]) => {
      const lowering = new QueueLowering();
      const queues = new QueueNumbers(s);
      const results = tasks.map((task): InsertResult => {
        const queueId = queues.of(task.tenantId, task.targetKey);
        if (s.insertTask.run(...taskToParams(task, queueId)).changes === 1) {
          // A hand-off (IN_FLIGHT) task is not due: its queue only needs to exist, for when it is retried.
          lowering.add(queueId, task.status === DUE_STATUS ? task.nextAttemptAt : null);
          return { kind: 'inserted', task };
        }
        // ON CONFLICT names the idempotency key only, so the row that won is found by that key.
        const stored = s.getTaskByKey.get(task.tenantId, task.idempotencyKey);
        if (stored === undefined) throw new Error(`Task ${task.taskId} was neither inserted nor found by its key.`);
        return { kind: 'duplicate', task: taskFromRow(stored, json) };
      });
      lowering.flush(lower);
      return results;
    }),
    /** Claims due rows of ready queues and returns them as they are after the claim, dealt round robin. */
    claim: db.transaction((now: number, claim: ClaimOptions) => claimRows(s, now, claim)),
    complete: db.transaction((completions: readonly AttemptCompletion[], now: number) => completeAll(s, lowerAndFree, completions, now)),
    /** Both of the above in one transaction: one commit, one fsync. Retries made due now are claimable at once. */
    completeAndClaim: db.transaction((completions: readonly AttemptCompletion[], now: number, claim: ClaimOptions) => ({
      results: completeAll(s, lowerAndFree, completions, now),
      rows: claimRows(s, now, claim),
    })),
    release: db.transaction((leases: readonly LeaseRef[], now: number) => {
      const lowering = new QueueLowering();
      let released = 0;
      for (const { tenantId, taskId, fencingToken } of leases) {
        const row = s.releaseLease.get({ tenantId, taskId: taskIdKey(taskId), fencingToken, now });
        if (row === undefined) continue;
        released += 1;
        lowering.add(row.queue_id, now);
      }
      lowering.flush(lowerAndFree);
      return released;
    }),
    /** The cancelled row, its queue's hint set exact again (it may have been the cancelled task's); nothing when refused. */
    cancel: db.transaction((ref: TaskRef, now: number, expiresAt: number) => {
      const row = s.cancelTask.get({ tenantId: ref.tenantId, taskId: taskIdKey(ref.taskId), now, expiresAt });
      if (row !== undefined) {
        const queueId = row[QUEUE_ID_POSITION] as number;
        s.refreshHint.run(queueId, queueId);
      }
      return row;
    }),
    /** `limitTarget`: the limits and the bucket of one target (see target-limits.ts). */
    limit: db.transaction((target: TargetRef, limits: TargetLimits, now: number) => applyLimits(s, target, limits, now)),
    /** The replayed row, its queue's hint lowered to its due time; nothing when the guard refused. */
    replay: db.transaction((ref: TaskRef, change: ReplayChange) => {
      const row = s.replayTask.get({ tenantId: ref.tenantId, taskId: taskIdKey(ref.taskId), ...change });
      if (row !== undefined) lower(row[QUEUE_ID_POSITION] as number, change.nextAttemptAt);
      return row;
    }),
    /**
     * The rescheduled row, its queue's hint set exact again (moved earlier it lowers the hint; moved later the task may
     * have been the queue's head, and an early hint would make claims look at a queue with nothing due); nothing when
     * the guard refused.
     */
    reschedule: db.transaction((ref: TaskRef, change: RescheduleChange) => {
      const row = s.rescheduleTask.get({ tenantId: ref.tenantId, taskId: taskIdKey(ref.taskId), ...change });
      if (row !== undefined) {
        const queueId = row[QUEUE_ID_POSITION] as number;
        s.refreshHint.run(queueId, queueId);
      }
      return row;
    }),
  };
}

/**
 * The numbers of the queues one insert call touches, by tenant and key: each looked up (or its row created) once per
 * call, in the call's transaction. Not shared between calls: a number read in a transaction that rolls back may be
 * given again to another queue.
 */
class QueueNumbers {
  readonly #s: Statements;
  readonly #byTenant = new Map<string, Map<string, number>>();

  constructor(s: Statements) {
    this.#s = s;
  }

  /** The number of the queue `(tenantId, targetKey)`, its row created if it has none. */
  of(tenantId: string, targetKey: string): number {
    let queues = this.#byTenant.get(tenantId);
    if (queues === undefined) {
      queues = new Map();
      this.#byTenant.set(tenantId, queues);
    }
    let queueId = queues.get(targetKey);
    if (queueId === undefined) {
      const row = this.#s.queueId.get(tenantId, targetKey) ?? this.#s.addQueue.get(tenantId, targetKey);
      if (row === undefined) throw new Error(`The queue of ${targetKey} was neither found nor created.`);
      queueId = row[0];
      queues.set(targetKey, queueId);
    }
    return queueId;
  }
}

/** The store's prepared transactions; run each as `.immediate(…)`. */
export interface Transactions {
  insert: Transaction<(tasks: readonly RetryTask[]) => InsertResult[]>;
  claim: Transaction<(now: number, claim: ClaimOptions) => DueRow[]>;
  complete: Transaction<(completions: readonly AttemptCompletion[], now: number) => CompletionResult[]>;
  completeAndClaim: Transaction<
    (completions: readonly AttemptCompletion[], now: number, claim: ClaimOptions) => { results: CompletionResult[]; rows: DueRow[] }
  >;
  release: Transaction<(leases: readonly LeaseRef[], now: number) => number>;
  cancel: Transaction<(ref: TaskRef, now: number, expiresAt: number) => TaskRow | undefined>;
  replay: Transaction<(ref: TaskRef, change: ReplayChange) => TaskRow | undefined>;
  reschedule: Transaction<(ref: TaskRef, change: RescheduleChange) => TaskRow | undefined>;
  limit: Transaction<(target: TargetRef, limits: TargetLimits, now: number) => void>;
}

/**
 * Claims by the rule of `ClaimOptions`: the candidate queues (hint ready by now, from `target_queues_ready`) in ring
 * order after `claim.after`; of them, the first `min(E, limit)` that truly have a due task (and, for a limited
 * queue, an allowance) each offer their earliest due tasks up to their share, or their allowance if smaller (from
 * `tasks_due`); `limit` of those are dealt round robin and claimed by rowid.
 *
 * A hint may be early (see queue-hints.ts), so with several candidates each is first probed, in ring order, for a
 * due task (one covering seek) until `limit` are found: a drained queue neither counts in E nor takes slots, and a
 * queue found with nothing due gets its exact hint back (a write, only then). A drained queue's hint is otherwise
 * left early: correcting it at every claim would cost a write per claim, and `nextDueAt` reads true heads anyway.
 *
 * A limited queue's gate is opened when it is considered and closed after the claim (target-limits.ts): a queue with
 * no allowance is throttled and takes no share. A queue without limits costs nothing more than before: its row,
 * read from `target_queues_ready` with its (null) limits, says so.
 *
 * With one candidate (the usual case) this is one read of `target_queues_ready`, one walk of the queue's head, and
 * the claims: the queue takes every slot, so there is nothing to probe.
 */
function claimRows(s: Statements, now: number, claim: ClaimOptions): DueRow[] {
  const candidates = s.readyQueues.all(now);
  if (candidates.length === 0) return [];
  const leaseExpiresAt = now + claim.leaseMs;
  let rows: DueRow[];
  let gated: readonly GatedQueue[] = NO_GATES;
  if (candidates.length === 1) {
    const queue = candidates[0] as ReadyQueueRow;
    const [tenantId, targetKey] = queue;
    const queueId = queue[READY_QUEUE_ID];
    const room = Math.min(claim.limit, roomOf(claim.rooms, { tenantId, targetKey }));
    if (room === 0) return [];
    const gate = isLimited(queue) ? openGate(s, queue, now) : undefined;
    const cap = gate === undefined ? room : Math.min(room, gate.offer);
    rows = cap > 0 ? s.selectDue.all(targetKey, queueId, now, cap) : [];
    if (cap > 0 && rows.length === 0) s.refreshHint.run(queueId, queueId);
    if (gate !== undefined) gated = [{ tenantId, targetKey, row: queue, gate }];
  } else {
    const queues = readyInRingOrder(s, candidates, now, claim);
    const { share } = claimShares(queues.length, claim.limit);
    const { rooms } = claim;
    const offers = queues.map((queue) => {
      const offer = Math.min(share, roomOf(rooms, queue));
      return s.selectDue.all(queue.targetKey, queue.row[READY_QUEUE_ID], now, queue.gate === undefined ? offer : Math.min(offer, queue.gate.offer));
    });
    // With rooms, every offer is dealt and a tenant's tasks beyond its room are left out before the cut to the limit.
    rows =
      rooms === undefined
        ? dealRoundRobin(offers, claim.limit)
        : keepWithinRooms(dealRoundRobin(offers, Infinity), rooms, claim.limit, (row) => row[TENANT_ID] as string);
    if (queues.some((queue) => queue.gate !== undefined)) {
      gated = queues.filter((queue): queue is GatedQueue => queue.gate !== undefined);
    }
  }
  for (const row of rows) {
    if (s.claimOne.run(claim.workerId, leaseExpiresAt, now, row[ROWID_POSITION] as number).changes !== 1) {
      throw new Error(`Task ${String(row[TASK_ID])} was due but could not be claimed.`);
    }
    markClaimed(row, LEASED_STATUS, claim.workerId, leaseExpiresAt, now);
  }
  for (const queue of gated) closeGate(s, queue.row, queue.gate, takenFrom(rows, queue), now, leaseExpiresAt);
  return rows;
}

/** A candidate queue in ring order, with its gate when it has limits. */
interface RingQueue extends TargetRef {
  row: ReadyQueueRow;
  gate?: Gate | undefined;
}
type GatedQueue = RingQueue & { gate: Gate };
/** What a claim of queues without limits has to close: nothing (and no array made per claim). */
const NO_GATES: readonly GatedQueue[] = Object.freeze([]);

/**
 * The first `min(E, limit)` candidates, in ring order, that have a task due by `now`, room in the claim's `rooms`
 * and, when limited, an allowance; a candidate found without a due task gets its exact hint (it was early), and a
 * limited one without an allowance is throttled (its gate closed with nothing taken), so the next claims do not read it.
 */
function readyInRingOrder(s: Statements, candidates: readonly ReadyQueueRow[], now: number, claim: ClaimOptions): RingQueue[] {
  const ready: RingQueue[] = [];
  const ring = ringOrder(
    candidates.map((row): RingQueue => ({ tenantId: row[0], targetKey: row[1], row })),
    claim.after,
  );
  for (const queue of ring) {
    if (claim.rooms !== undefined && roomOf(claim.rooms, queue) === 0) continue;
    const queueId = queue.row[READY_QUEUE_ID];
    if (s.hasDue.get(queueId, now) === undefined) {
      s.refreshHint.run(queueId, queueId);
      continue;
    }
    if (isLimited(queue.row)) {
      queue.gate = openGate(s, queue.row, now);
      if (queue.gate.offer === 0) {
        closeGate(s, queue.row, queue.gate, 0, now, now + claim.leaseMs);
        continue;
      }
    }
    if (ready.push(queue) === claim.limit) break;
  }
  return ready;
}

/** How many of `rows` (the claim's) belong to `queue`: what the claim took from it. */
function takenFrom(rows: readonly DueRow[], queue: TargetRef): number {
  let taken = 0;
  for (const row of rows) if (row[TARGET_KEY] === queue.targetKey && row[TENANT_ID] === queue.tenantId) taken += 1;
  return taken;
}

/**
 * Applies completions in order, then, once per queue, lowers the hint of each queue that a retry made due and ends
 * the in-flight throttle of each queue that a completion freed a slot of (`lower` runs `LOWER_HINT_AND_FREE` of
 * queue-statements.ts): one statement per distinct queue per call, a lookup by number that writes nothing for a
 * queue without limits and without a retry to lower its hint to.
 */
function completeAll(s: Statements, lower: LowerHint, completions: readonly AttemptCompletion[], now: number): CompletionResult[] {
  const lowering = new QueueLowering();
  const results = completions.map((completion) => completeOne(s, completion, now, lowering));
  lowering.flush(lower);
  return results;
}

/**
 * One completion, fenced. With a cancel alternative, `next` applies only if no cancel was requested and the
 * alternative only if one was: two guarded statements (the second runs only when a cancel was requested, or when
 * the task is fenced out), each writing `ended_at` only for an outcome that ends the task. The task's queue (which
 * both forms of the statement return) is noted in `lowering`, with the due time of a retry (an outcome back to
 * PENDING).
 */
function completeOne(s: Statements, completion: AttemptCompletion, now: number, lowering: QueueLowering): CompletionResult {
  const cancel = completion.ifCancelRequested;
  let outcome = completion.next;
  let row = applyOutcome(s, completion, outcome, cancel === undefined ? null : 0, now);
  if (row === undefined && cancel !== undefined) {
    outcome = cancel;
    row = applyOutcome(s, completion, cancel, 1, now);
  }
  if (row === undefined) return { kind: 'fenced_out', taskId: completion.taskId };
  const attempt = outcome === cancel ? (completion.attemptIfCancelRequested ?? completion.attempt) : completion.attempt;
  if (attempt !== undefined) insertAttempt(s, attempt);
  // Every applied completion takes its task out of IN_FLIGHT: its queue is noted, due or not, to be freed.
  lowering.add(row[2], outcome.status === DUE_STATUS ? outcome.nextAttemptAt : null);
  return {
    kind: 'applied',
    taskId: completion.taskId,
    status: outcome.status,
    nextAttemptAt: outcome.nextAttemptAt,
    version: row[0],
    cancelRequested: row[1] === 1,
  };
}

function applyOutcome(
  s: Statements,
  completion: AttemptCompletion,
  outcome: TaskOutcome,
  cancelRequested: 0 | 1 | null,
  now: number,
): CompletedRow | undefined {
  const ends = !isLive(outcome.status);
  const statement = ends ? s.completeToEnded : s.completeToLive;
  return statement.get(...completeParams(completion, outcome, ends, cancelRequested, now));
}

function insertAttempt(s: Statements, attempt: AttemptLog): void {
  try {
    s.insertAttempt.run(...attemptToParams(attempt));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      throw new DuplicateAttemptError(attempt.taskId, attempt.attemptNumber, { cause: error });
    }
    throw error;
  }
}
