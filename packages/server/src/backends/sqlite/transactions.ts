import type { Database, Transaction } from 'better-sqlite3';
import { isLive } from '@retryd/core';
import type { AttemptLog, RetryTask } from '../../domain/task.js';
import { claimShares, dealRoundRobin, ringOrder } from '../../store/claim-shares.js';
import type {
  AttemptCompletion,
  ClaimOptions,
  CompletionResult,
  InsertResult,
  LeaseRef,
  ReplayChange,
  TargetRef,
  TaskOutcome,
  TaskRef,
} from '../../store/store.js';
import { DuplicateAttemptError } from '../../store/store-errors.js';
import type { JsonCache } from './json-cache.js';
import { QueueLowering, type LowerHint } from './queue-hints.js';
import { ROWID_POSITION, completeParams } from './statements.js';
import type { CompletedRow, DueRow, Statements } from './statements.js';
import { DUE_STATUS, LEASED_STATUS } from '../../store/transition-guards.js';
import { attemptToParams, markClaimed, rowPosition, taskFromRow, taskToParams } from './task-row.js';
import type { TaskRow } from './task-row.js';

// The multi-statement writes of the SQLite store: claims, completions, inserts, lease hand-backs and replays, each
// one transaction with the due-time hints of the target queues it touches (see queue-hints.ts).

const TARGET_KEY = rowPosition('targetKey');
const TASK_ID = rowPosition('taskId');

/**
 * The store's transactions, each created once (better-sqlite3 builds several wrapper functions per `transaction()`).
 * Each runs as `.immediate(…)`: it takes the write lock at BEGIN, so two processes on one file never both read
 * then both write, and a queue's hint is never read by one and lowered by another in between.
 */
export function prepareTransactions(db: Database, s: Statements, json: JsonCache): Transactions {
  const lower: LowerHint = (tenantId, targetKey, dueAt) => s.lowerHint.run(tenantId, targetKey, dueAt);
  return {
    /** Inserts the new tasks; every queue they belong to gets its row, its hint lowered to their earliest due. */
    insert: db.transaction((tasks: readonly RetryTask[]) => {
      const lowering = new QueueLowering();
      const results = tasks.map((task): InsertResult => {
        if (s.insertTask.run(...taskToParams(task)).changes === 1) {
          // A hand-off (IN_FLIGHT) task is not due: its queue only needs to exist, for when it is retried.
          lowering.add(task.tenantId, task.targetKey, task.status === DUE_STATUS ? task.nextAttemptAt : null);
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
    complete: db.transaction((completions: readonly AttemptCompletion[], now: number) => completeAll(s, lower, completions, now)),
    /** Both of the above in one transaction: one commit, one fsync. Retries made due now are claimable at once. */
    completeAndClaim: db.transaction((completions: readonly AttemptCompletion[], now: number, claim: ClaimOptions) => ({
      results: completeAll(s, lower, completions, now),
      rows: claimRows(s, now, claim),
    })),
    release: db.transaction((leases: readonly LeaseRef[], now: number) => {
      const lowering = new QueueLowering();
      let released = 0;
      for (const { tenantId, taskId, fencingToken } of leases) {
        const row = s.releaseLease.get({ tenantId, taskId, fencingToken, now });
        if (row === undefined) continue;
        released += 1;
        lowering.add(tenantId, row.target_key, now);
      }
      lowering.flush(lower);
      return released;
    }),
    /** The cancelled row, its queue's hint set exact again (it may have been the cancelled task's); nothing when refused. */
    cancel: db.transaction((ref: TaskRef, now: number) => {
      const row = s.cancelTask.get({ tenantId: ref.tenantId, taskId: ref.taskId, now });
      if (row !== undefined) {
        const targetKey = row[TARGET_KEY] as string;
        s.refreshHint.run(ref.tenantId, targetKey, ref.tenantId, targetKey);
      }
      return row;
    }),
    /** The replayed row, its queue's hint lowered to its due time; nothing when the guard refused. */
    replay: db.transaction((ref: TaskRef, change: ReplayChange) => {
      const row = s.replayTask.get({ tenantId: ref.tenantId, taskId: ref.taskId, ...change });
      if (row !== undefined) lower(ref.tenantId, row[TARGET_KEY] as string, change.nextAttemptAt);
      return row;
    }),
  };
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
  cancel: Transaction<(ref: TaskRef, now: number) => TaskRow | undefined>;
  replay: Transaction<(ref: TaskRef, change: ReplayChange) => TaskRow | undefined>;
}

/**
 * Claims by the rule of `ClaimOptions`: the candidate queues (hint ready by now, from `target_queues_ready`) in ring
 * order after `claim.after`; of them, the first `min(E, limit)` that truly have a due task each offer their earliest
 * due tasks up to their share (from `tasks_due`); `limit` of those are dealt round robin and claimed by rowid.
 *
 * A hint may be early (see queue-hints.ts), so with several candidates each is first probed, in ring order, for a
 * due task (one covering seek) until `limit` are found: a drained queue neither counts in E nor takes slots, and a
 * queue found with nothing due gets its exact hint back (a write, only then). A drained queue's hint is otherwise
 * left early: correcting it at every claim would cost a write per claim, and `nextDueAt` reads true heads anyway.
 *
 * With one candidate (the usual case) this is one read of `target_queues_ready`, one walk of the queue's head, and
 * the claims: the queue takes every slot, so there is nothing to probe.
 */
function claimRows(s: Statements, now: number, claim: ClaimOptions): DueRow[] {
  const candidates = s.readyQueues.all(now);
  let rows: DueRow[];
  if (candidates.length === 0) return [];
  if (candidates.length === 1) {
    const [tenantId, targetKey] = candidates[0] as [string, string];
    rows = s.selectDue.all(tenantId, targetKey, now, claim.limit);
    if (rows.length === 0) s.refreshHint.run(tenantId, targetKey, tenantId, targetKey);
  } else {
    const queues = readyInRingOrder(s, candidates, now, claim);
    const { share } = claimShares(queues.length, claim.limit);
    rows = dealRoundRobin(
      queues.map(({ tenantId, targetKey }) => s.selectDue.all(tenantId, targetKey, now, share)),
      claim.limit,
    );
  }
  const leaseExpiresAt = now + claim.leaseMs;
  for (const row of rows) {
    if (s.claimOne.run(claim.workerId, leaseExpiresAt, now, row[ROWID_POSITION] as number).changes !== 1) {
      throw new Error(`Task ${String(row[TASK_ID])} was due but could not be claimed.`);
    }
    markClaimed(row, LEASED_STATUS, claim.workerId, leaseExpiresAt, now);
  }
  return rows;
}

/**
 * The first `min(E, limit)` candidates, in ring order, that have a task due by `now`; a candidate found without
 * one gets its exact hint (it was early).
 */
function readyInRingOrder(s: Statements, candidates: readonly [string, string][], now: number, claim: ClaimOptions): TargetRef[] {
  const ready: TargetRef[] = [];
  const ring = ringOrder(
    candidates.map(([tenantId, targetKey]) => ({ tenantId, targetKey })),
    claim.after,
  );
  for (const queue of ring) {
    if (s.hasDue.get(queue.tenantId, queue.targetKey, now) !== undefined) {
      if (ready.push(queue) === claim.limit) break;
    } else {
      s.refreshHint.run(queue.tenantId, queue.targetKey, queue.tenantId, queue.targetKey);
    }
  }
  return ready;
}

/** Applies completions in order, then lowers the hint of each queue that a retry made due, once per queue. */
function completeAll(s: Statements, lower: LowerHint, completions: readonly AttemptCompletion[], now: number): CompletionResult[] {
  const lowering = new QueueLowering();
  const results = completions.map((completion) => completeOne(s, completion, now, lowering));
  lowering.flush(lower);
  return results;
}

/**
 * One completion, fenced. With a cancel alternative, `next` applies only if no cancel was requested and the
 * alternative only if one was: two guarded statements (the second runs only when a cancel was requested, or when
 * the task is fenced out), each writing `ended_at` only for an outcome that ends the task. A retry (an outcome back
 * to PENDING) is noted in `lowering` under the task's queue, which the live form of the statement returns.
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
  if (outcome.status === DUE_STATUS && row[2] !== undefined) lowering.add(completion.tenantId, row[2], outcome.nextAttemptAt);
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
