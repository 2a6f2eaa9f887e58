import type { Database, Transaction } from 'better-sqlite3';
import type { AttemptLog, RetryTask } from '../../domain/task.js';
import type { AttemptCompletion, CompletionResult, InsertResult, LeaseRef, TaskOutcome } from '../../store/store.js';
import { DuplicateAttemptError } from '../../store/store-errors.js';
import type { JsonCache } from './json-cache.js';
import { completeParams, isLive } from './statements.js';
import type { CompletedRow, DueRow, Statements } from './statements.js';
import { TASK_COLUMN_NAMES, attemptToParams, markClaimed, taskFromRow, taskToParams } from './task-row.js';

// The multi-statement writes of the SQLite store: claims, completions, inserts and lease hand-backs.

/** Where a {@link DueRow} keeps the rowid: after every task column. */
const ROWID = TASK_COLUMN_NAMES.length;

/**
 * The store's transactions, each created once (better-sqlite3 builds several wrapper functions per `transaction()`).
 * Each runs as `.immediate(…)`: it takes the write lock at BEGIN, so two processes on one file never both read
 * then both write.
 */
export function prepareTransactions(db: Database, s: Statements, json: JsonCache): Transactions {
  return {
    insert: db.transaction((tasks: readonly RetryTask[]) =>
      tasks.map((task): InsertResult => {
        if (s.insertTask.run(...taskToParams(task)).changes === 1) return { kind: 'inserted', task };
        // ON CONFLICT names the idempotency key only, so the row that won is found by that key.
        const stored = s.getTaskByKey.get(task.tenantId, task.idempotencyKey);
        if (stored === undefined) throw new Error(`Task ${task.taskId} was neither inserted nor found by its key.`);
        return { kind: 'duplicate', task: taskFromRow(stored, json) };
      }),
    ),
    /** Claims the due rows and returns them as they are after the claim, earliest due first. */
    claim: db.transaction((now: number, limit: number, workerId: string, leaseExpiresAt: number) =>
      claimRows(s, now, limit, workerId, leaseExpiresAt),
    ),
    complete: db.transaction((completions: readonly AttemptCompletion[], now: number) =>
      completions.map((completion) => completeOne(s, completion, now)),
    ),
    /** Both of the above in one transaction: one commit, one fsync. */
    completeAndClaim: db.transaction(
      (completions: readonly AttemptCompletion[], now: number, limit: number, workerId: string, leaseExpiresAt: number) => ({
        results: completions.map((completion) => completeOne(s, completion, now)),
        rows: claimRows(s, now, limit, workerId, leaseExpiresAt),
      }),
    ),
    release: db.transaction((leases: readonly LeaseRef[], now: number) =>
      leases.reduce(
        (released, lease) =>
          released + s.releaseLease.run({ tenantId: lease.tenantId, taskId: lease.taskId, fencingToken: lease.fencingToken, now }).changes,
        0,
      ),
    ),
  };
}

/** The store's prepared transactions; run each as `.immediate(…)`. */
export interface Transactions {
  insert: Transaction<(tasks: readonly RetryTask[]) => InsertResult[]>;
  claim: Transaction<(now: number, limit: number, workerId: string, leaseExpiresAt: number) => DueRow[]>;
  complete: Transaction<(completions: readonly AttemptCompletion[], now: number) => CompletionResult[]>;
  completeAndClaim: Transaction<
    (
      completions: readonly AttemptCompletion[],
      now: number,
      limit: number,
      workerId: string,
      leaseExpiresAt: number,
    ) => { results: CompletionResult[]; rows: DueRow[] }
  >;
  release: Transaction<(leases: readonly LeaseRef[], now: number) => number>;
}

/** Claims up to `limit` due rows for `workerId` and returns them as they are after the claim, earliest due first. */
function claimRows(s: Statements, now: number, limit: number, workerId: string, leaseExpiresAt: number): DueRow[] {
  const rows = s.selectDue.all(now, limit);
  for (const row of rows) {
    if (s.claimOne.run(workerId, leaseExpiresAt, now, row[ROWID]).changes !== 1) {
      throw new Error(`Task ${row[1]} was due but could not be claimed.`);
    }
    markClaimed(row, workerId, leaseExpiresAt, now);
  }
  return rows;
}

/**
 * One completion, fenced. With a cancel alternative, `next` applies only if no cancel was requested and the
 * alternative only if one was: two guarded statements (the second runs only when a cancel was requested, or when
 * the task is fenced out), each writing `ended_at` only for an outcome that ends the task.
 */
function completeOne(s: Statements, completion: AttemptCompletion, now: number): CompletionResult {
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

