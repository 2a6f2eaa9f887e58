import { checkNewTasks } from '../../store/new-tasks.js';
import { SqliteCallbacksOwed } from './callbacks-owed.js';
import type { CallbackOutbox } from '../../store/callback-outbox.js';
import type { Database } from 'better-sqlite3';
import { TaskStatus } from '@retryd/core';
import type { AttemptLog, Page, RetryTask, StoredPolicy } from '../../domain/task.js';
import type {
  AccessStore,
  AdminReads,
  AttemptCompletion,
  ClaimOptions,
  CompleteAndClaimResult,
  CompletionResult,
  InsertResult,
  LeaseRef,
  PageRequest,
  ListedTask,
  PurgedTask,
  PutPolicyResult,
  ReplayChange,
  RescheduleChange,
  SealedTaskStore,
  Store,
  TargetLimits,
  TargetRef,
  TargetState,
  TargetStateStore,
  TargetView,
  TaskQuery,
  TaskRef,
  TransitionResult,
  VisibleInsert,
} from '../../store/store.js';
import { SqliteAccessStore } from './access-store.js';
import { CHECKPOINT_BACKSTOP_FACTOR, DEFAULT_CHECKPOINT_INTERVAL_MS, DEFAULT_WAL_AUTOCHECKPOINT_PAGES, openConnection, readSettings } from './connection.js';
import type { SqliteSettings, SqliteStoreOptions } from './connection.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import { TaskListing } from './list-tasks.js';
import { loadMigrations, migrate } from './migrate.js';
import { JsonCache } from '../../store/json-cache.js';
import { ExpiredTaskPurge } from './purge-expired.js';
import { SqliteSealedTasks } from './sealed-tasks.js';
import { prepareStatements } from './statements.js';
import type { DueRow, Statements } from './statements.js';
import { DUE_STATUS, LEASED_STATUS } from '../../store/transition-guards.js';
import { attemptFromRow } from '../sql/sql-rows.js';
import { policyFromRow, taskFromRow } from './task-row.js';
import type { TaskRow } from './task-row.js';
import { TargetViews } from './target-views.js';
import { OldestPendingReads } from './oldest-pending-reads.js';
import type { OldestPending } from '../../store/oldest-pending.js';
import { statusOfCode } from './status-guards.js';
import { prepareTransactions } from './transactions.js';
import type { Transactions } from './transactions.js';
import { hyphenatedUuid, taskIdKey } from '../sql/task-id-params.js';
import { WalFlush } from './wal-flush.js';
import { WalCheckpointer } from './wal-checkpointer.js';

export type { SqliteSettings, SqliteStoreOptions } from './connection.js';

/**
 * The embedded store: one SQLite file in WAL mode through better-sqlite3, durable by default.
 *
 * better-sqlite3 is synchronous, so each call runs to completion on the calling thread and calls never
 * interleave inside one process; IMMEDIATE transactions keep several processes on one file correct. Every
 * batch (`insertTasks`, `completeAttempts`, `releaseLeases`) is one transaction, i.e. one fsync.
 *
 * Target queues live in `target_queues` (see 002-targets.sql and 003-target-limits.sql): claims find ready queues
 * there and share their slots among them (transactions.ts), and the target gate (hold, rate and concurrency limits)
 * is columns of it (target-limits.ts). The store is its own
 * {@link AdminReads} and {@link TargetStateStore} (`admin` and `targetState` return it); its {@link AccessStore} is
 * `access` (access-store.ts), `sealing` is sealed-tasks.ts, and the retention purge is purge-expired.ts.
 *
 * @example
 * ```ts
 * const store = new SqliteStore('./retryd.db');
 * await store.init();
 * ```
 */
export class SqliteStore implements Store, AdminReads, TargetStateStore {
  readonly kind = 'sqlite';
  /** The database file, or `:memory:`. */
  readonly path: string;
  readonly #db: Database;
  /** Parsed `headers` and `policy` texts, shared by the tasks that carry the same text. */
  readonly #json = new JsonCache();
  #statements: Statements | undefined;
  #listing: TaskListing | undefined;
  #targets: TargetViews | undefined;
  #oldestPending: OldestPendingReads | undefined;
  #transactions: Transactions | undefined;
  #access: SqliteAccessStore | undefined;
  #sealing: SqliteSealedTasks | undefined;
  #expired: ExpiredTaskPurge | undefined;
  #callbacks: SqliteCallbacksOwed | undefined;
  /** The hand-off's commit without its fsync, and that fsync after it (absent: every commit fsyncs itself, or none does). */
  #walFlush: WalFlush | undefined;
  /** Copies the WAL into the database file from a worker thread (absent: the commits checkpoint, as SQLite does). */
  #checkpointer: WalCheckpointer | undefined;
  readonly #options: SqliteStoreOptions;

  /**
   * {@link insertTasks} in two steps (`Store.insertTasksVisible`), set by {@link init} when every commit is fsynced
   * (`synchronous = FULL`, a file): the insert commits without its fsync and answers once its tasks are visible;
   * `durable` resolves when an fdatasync of the WAL, on libuv's thread pool, has put the commit on disk (wal-flush.ts).
   * A hand-off's attempt then starts while the disk works, and the event loop does not wait for it; the enqueue still
   * answers only once `durable` has. Absent with `NORMAL` or `:memory:`, whose inserts are as durable as they get
   * when they answer.
   */
  insertTasksVisible?: (tasks: readonly RetryTask[]) => Promise<VisibleInsert>;

  /** Reads for operators and metrics: this store itself. */
  get admin(): AdminReads {
    return this;
  }

  /** Per-target state: this store itself. */
  get targetState(): TargetStateStore {
    return this;
  }

  /** API keys and tenant limits: the `api_keys` and `tenant_limits` tables (access-store.ts). */
  get access(): AccessStore {
    if (this.#access === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#access;
  }

  /** Sealed secrets and their re-seal under a new key (see sealed-tasks.ts). */
  get sealing(): SealedTaskStore {
    if (this.#sealing === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#sealing;
  }

  /** The callbacks owed by ended tasks (see callbacks-owed.ts). */
  get callbacks(): CallbackOutbox {
    if (this.#callbacks === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#callbacks;
  }

  /** Opens (creating if needed) the file and applies the connection settings; `init()` creates the schema. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path;
    this.#options = options;
    this.#db = openConnection(path, options);
  }

  async init(): Promise<void> {
    if (this.#statements !== undefined) return;
    migrate(this.#db, loadMigrations());
    const statements = prepareStatements(this.#db);
    this.#statements = statements;
    this.#listing = new TaskListing(this.#db);
    this.#targets = new TargetViews(this.#db);
    this.#oldestPending = new OldestPendingReads(this.#db);
    this.#transactions = prepareTransactions(this.#db, statements, this.#json);
    this.#access = new SqliteAccessStore(this.#db);
    this.#sealing = new SqliteSealedTasks(this.#db, this.#json);
    this.#expired = new ExpiredTaskPurge(this.#db);
    this.#callbacks = new SqliteCallbacksOwed(this.#db);
    // Before WalFlush, which reads the automatic checkpoint when it opens and sets it back to that after each of its
    // commits.
    this.#checkpointer = this.#openCheckpointer();
    const walFlush = WalFlush.open(this.#db);
    this.#walFlush = walFlush;
    if (walFlush !== undefined) this.insertTasksVisible = async (tasks) => this.#insertVisible(walFlush, tasks);
  }

  async ping(): Promise<void> {
    this.#s.ping.get();
  }

  /**
   * The checkpointer of a file in WAL mode (wal-checkpointer.ts), with the connection's own automatic checkpoint moved
   * out to its backstop; undefined with `checkpointIntervalMs: 0` or for a database with no WAL to checkpoint.
   */
  #openCheckpointer(): WalCheckpointer | undefined {
    const intervalMs = this.#options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
    if (!(intervalMs > 0)) return undefined;
    const pages = Math.trunc(this.#options.walAutocheckpointPages ?? DEFAULT_WAL_AUTOCHECKPOINT_PAGES);
    const checkpointer = WalCheckpointer.open(this.#db, {
      intervalMs,
      onError: this.#options.onError ?? (() => undefined),
      // A worker that failed is not started again: the commits checkpoint, as without one.
      onStopped: () => {
        if (!this.#db.open) return;
        this.#db.pragma(`wal_autocheckpoint = ${pages}`);
        this.#walFlush?.setCheckpointPages(pages);
      },
    });
    if (checkpointer !== undefined) this.#db.pragma(`wal_autocheckpoint = ${pages * CHECKPOINT_BACKSTOP_FACTOR}`);
    return checkpointer;
  }

  /** Closes the file. Idempotent. Nothing is pending: every call committed before it returned. */
  async close(): Promise<void> {
    if (!this.#db.open) return;
    await this.#walFlush?.close();
    // The worker's connection first, so that this one is the last: SQLite then checkpoints and removes the WAL.
    await this.#checkpointer?.close();
    // Lets SQLite refresh the statistics its planner uses, cheaply, as its documentation advises at close.
    if (this.#statements !== undefined) this.#db.pragma('optimize');
    this.#db.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The settings in force, read back through PRAGMA (for start-up logs and tests). */
  describeSettings(): SqliteSettings {
    return readSettings(this.#db);
  }

  // ---- tasks ---------------------------------------------------------------------------------------

  async insertTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    checkNewTasks(tasks);
    return this.insertStoredTasks(tasks);
  }

  #insertVisible(walFlush: WalFlush, tasks: readonly RetryTask[]): VisibleInsert {
    checkNewTasks(tasks);
    if (tasks.length === 0) return { results: [], durable: Promise.resolve() };
    const results = walFlush.commitUnsynced(() => this.#tx.insert.immediate(tasks));
    const durable = walFlush.flush();
    // The enqueue awaits it; a rejection must not end the process meanwhile.
    durable.catch(() => undefined);
    return { results, durable };
  }

  /**
   * Inserts tasks as given, in any status ({@link insertTasks} takes only new ones): for tests that need a task that
   * has already ended, without driving it there through claims and completions (River keeps `JobInsertFull` apart from
   * `JobInsertFast` the same way). Not on the `Store` port, and nothing in the service calls it.
   */
  async insertStoredTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    if (tasks.length === 0) return [];
    return this.#tx.insert.immediate(tasks);
  }

  async getTask(tenantId: string, taskId: string): Promise<RetryTask | undefined> {
    const row = this.#s.getTask.get(tenantId, taskIdKey(taskId));
    return row === undefined ? undefined : taskFromRow(row, this.#json);
  }

  async listTasks(query: TaskQuery): Promise<Page<RetryTask>> {
    const after =
      query.cursor === undefined ? undefined : decodeCursor('tasks', query.cursor, 'nu');
    const rows = this.#listingOf().list(
      query,
      after === undefined ? undefined : { createdAt: after[0] as number, taskId: after[1] as string },
    );
    return pageOf(rows.map((row) => taskFromRow(row, this.#json)), query.limit, (t) => encodeCursor('tasks', [t.createdAt, t.taskId]));
  }

  async cancelTask(ref: TaskRef, now: number, expiresAt: number): Promise<TransitionResult> {
    return this.#transitionResult(ref, this.#tx.cancel.immediate(ref, now, expiresAt));
  }

  async requestCancel(ref: TaskRef, now: number): Promise<TransitionResult> {
    return this.#transitionResult(ref, this.#s.requestCancel.get({ tenantId: ref.tenantId, taskId: taskIdKey(ref.taskId), now }));
  }

  async replayTask(ref: TaskRef, change: ReplayChange): Promise<TransitionResult> {
    return this.#transitionResult(ref, this.#tx.replay.immediate(ref, change));
  }

  async rescheduleTask(ref: TaskRef, change: RescheduleChange): Promise<TransitionResult> {
    return this.#transitionResult(ref, this.#tx.reschedule.immediate(ref, change));
  }

  // ---- retention -----------------------------------------------------------------------------------

  /** One transaction through `tasks_expiry`, then a bounded `incremental_vacuum` (see purge-expired.ts). */
  async purgeExpired(now: number, limit: number): Promise<PurgedTask[]> {
    if (limit <= 0) return [];
    if (this.#expired === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#expired.purge(now, limit);
  }

  /** One transaction: each task by its key, deleted if still finished at its version (see purge-expired.ts). */
  async deleteFinishedTasks(tenantId: string, tasks: readonly ListedTask[]): Promise<PurgedTask[]> {
    if (this.#expired === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#expired.deleteFinished(tenantId, tasks);
  }

  // ---- scheduling ----------------------------------------------------------------------------------

  async claimDue(now: number, options: ClaimOptions): Promise<RetryTask[]> {
    if (options.limit <= 0) return [];
    return this.#tasksOf(this.#tx.claim.immediate(now, options));
  }

  /**
   * Exact in the usual case: the queues are read in hint order with their true heads and gates (hold, throttles),
   * and the walk stops at the first hint past the best time found (a queue's `ready_at` is never later than its true
   * time). After {@link NEXT_DUE_PROBES} queues whose hints were all early, the next hint is returned: early, as the
   * port allows, and corrected by the claim it leads to.
   */
  async nextDueAt(): Promise<number | null> {
    let best: number | null = null;
    let probes = 0;
    for (const [readyAt, heldUntil, throttledUntil, fullUntil, head] of this.#s.readyTimes.iterate()) {
      if (best !== null && readyAt >= best) break;
      if (++probes > NEXT_DUE_PROBES) return readyAt;
      if (head === null) continue;
      const at = Math.max(head, heldUntil ?? head, throttledUntil ?? head, fullUntil ?? head);
      if (best === null || at < best) best = at;
    }
    return best;
  }

  async findExpiredLeases(now: number, limit: number): Promise<RetryTask[]> {
    return this.#s.findExpiredLeases.all({ now, limit }).map((row) => taskFromRow(row, this.#json));
  }

  async nextLeaseExpiryAt(): Promise<number | null> {
    return this.#s.nextLeaseExpiryAt.get()?.at ?? null;
  }

  async completeAttempts(completions: readonly AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    if (completions.length === 0) return [];
    return this.#tx.complete.immediate(completions, now);
  }

  async completeAndClaim(completions: readonly AttemptCompletion[], now: number, claim: ClaimOptions): Promise<CompleteAndClaimResult> {
    if (claim.limit <= 0) return { results: await this.completeAttempts(completions, now), claimed: [] };
    const { results, rows } = this.#tx.completeAndClaim.immediate(completions, now, claim);
    return { results, claimed: this.#tasksOf(rows) };
  }

  async extendLease(tenantId: string, taskId: string, fencingToken: number, leaseExpiresAt: number): Promise<boolean> {
    return this.#s.extendLease.run({ tenantId, taskId: taskIdKey(taskId), fencingToken, leaseExpiresAt }).changes === 1;
  }

  async releaseLeases(leases: readonly LeaseRef[], now: number): Promise<number> {
    if (leases.length === 0) return 0;
    return this.#tx.release.immediate(leases, now);
  }

  // ---- the target gate ----------------------------------------------------------------------------

  async holdTarget(target: TargetRef, until: number, now: number): Promise<void> {
    this.#s.holdTarget.run(target.tenantId, target.targetKey, until, now);
  }

  async releaseTarget(target: TargetRef, now: number): Promise<void> {
    this.#s.releaseTarget.run(now, target.tenantId, target.targetKey);
  }

  async limitTarget(target: TargetRef, limits: TargetLimits, now: number): Promise<void> {
    this.#tx.limit.immediate(target, limits, now);
  }

  // ---- attempts ------------------------------------------------------------------------------------

  async listAttempts(tenantId: string, taskId: string, page: PageRequest): Promise<Page<AttemptLog>> {
    const after = page.cursor === undefined ? 0 : (decodeCursor('attempts', page.cursor, 'n')[0] as number);
    const rows = this.#s.listAttempts.all(tenantId, taskIdKey(taskId), after, page.limit + 1);
    const attempts = rows.map((row) => attemptFromRow({ ...row, task_id: hyphenatedUuid(row.task_id) }));
    return pageOf(attempts, page.limit, (a) => encodeCursor('attempts', [a.attemptNumber]));
  }

  // ---- policies ------------------------------------------------------------------------------------

  async putPolicy(policy: StoredPolicy, mode: 'create' | 'replace'): Promise<PutPolicyResult> {
    const s = this.#s;
    const row = {
      tenant_id: policy.tenantId,
      policy_id: policy.policyId,
      policy: JSON.stringify(policy.policy),
      callback: policy.callback === null ? null : JSON.stringify(policy.callback),
      created_at: policy.createdAt,
      updated_at: policy.updatedAt,
      version: policy.version,
    };
    if (mode === 'replace') {
      const replaced = s.replacePolicy.get(row);
      return replaced === undefined ? { kind: 'not_found' } : { kind: 'replaced', policy: policyFromRow(replaced) };
    }
    if (s.insertPolicy.run(row).changes === 1) return { kind: 'created', policy };
    const stored = s.getPolicy.get(policy.tenantId, policy.policyId);
    if (stored === undefined) throw new Error(`Policy ${policy.policyId} was neither created nor found.`);
    return { kind: 'exists', policy: policyFromRow(stored) };
  }

  async getPolicy(tenantId: string, policyId: string): Promise<StoredPolicy | undefined> {
    const row = this.#s.getPolicy.get(tenantId, policyId);
    return row === undefined ? undefined : policyFromRow(row);
  }

  async listPolicies(tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>> {
    const s = this.#s;
    const rows =
      page.cursor === undefined
        ? s.listPolicies.all(tenantId, page.limit + 1)
        : s.listPoliciesAfter.all(tenantId, decodeCursor('policies', page.cursor, 's')[0] as string, page.limit + 1);
    return pageOf(rows.map(policyFromRow), page.limit, (p) => encodeCursor('policies', [p.policyId]));
  }

  // ---- per-target state (TargetStateStore) ----------------------------------------------------------------------

  async getTargetState(tenantId: string, key: string): Promise<TargetState | undefined> {
    const row = this.#s.getTargetState.get(tenantId, key);
    return row === undefined ? undefined : { value: row.value, version: row.version, updatedAt: row.updated_at };
  }

  async putTargetState(
    tenantId: string,
    key: string,
    expectedVersion: number,
    value: string,
    now: number,
  ): Promise<boolean> {
    const s = this.#s;
    const result =
      expectedVersion === 0
        ? s.insertTargetState.run(tenantId, key, value, now)
        : s.updateTargetState.run(value, now, tenantId, key, expectedVersion);
    return result.changes === 1;
  }

  // ---- admin reads (AdminReads) ---------------------------------------------------------------------

  async getTaskByIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<RetryTask | undefined> {
    const row = this.#s.getTaskByKey.get(tenantId, idempotencyKey);
    return row === undefined ? undefined : taskFromRow(row, this.#json);
  }

  /** Covering walks of the listing indexes (no table row read); linear in the task count. */
  async countByStatus(tenantId?: string): Promise<Record<TaskStatus, number>> {
    const s = this.#s;
    const counts = Object.fromEntries(Object.values(TaskStatus).map((status) => [status, 0])) as Record<TaskStatus, number>;
    const rows = tenantId === undefined ? s.countByStatus.all() : s.countByStatusOfTenant.all({ tenantId });
    let live = 0;
    for (const { status, n } of rows) {
      if (status === 'LIVE') live += n;
      else counts[statusOfCode(status)] += n;
    }
    // Live tasks are the due ones and the leased ones (`tasks_live` holds both).
    counts[DUE_STATUS] = live - counts[LEASED_STATUS];
    return counts;
  }

  /** One row read per target, then its queue's head and two bounded counts (see target-views.ts). */
  async listTargets(tenantId: string, page: PageRequest, now: number): Promise<Page<TargetView>> {
    return this.#targetViews.list(tenantId, page, now);
  }

  async getTarget(target: TargetRef, now: number): Promise<TargetView | undefined> {
    return this.#targetViews.get(target, now);
  }

  /** Each tenant's stretch of `tasks_live`, oldest first, a page at a time (see oldest-pending-reads.ts). */
  async oldestPending(limit: number): Promise<OldestPending[]> {
    if (this.#oldestPending === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#oldestPending.read(limit);
  }

  get #s(): Statements {
    if (this.#statements === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#statements;
  }

  /** A named transition's answer: the row it changed, or else the task as it is (refused) or none. */
  #transitionResult(ref: TaskRef, changed: TaskRow | undefined): TransitionResult {
    if (changed !== undefined) return { kind: 'applied', task: taskFromRow(changed, this.#json) };
    const current = this.#s.getTask.get(ref.tenantId, taskIdKey(ref.taskId));
    return current === undefined ? { kind: 'not_found' } : { kind: 'refused', task: taskFromRow(current, this.#json) };
  }

  #tasksOf(rows: readonly DueRow[]): RetryTask[] {
    const tasks: RetryTask[] = new Array<RetryTask>(rows.length);
    for (let i = 0; i < rows.length; i++) tasks[i] = taskFromRow(rows[i] as DueRow, this.#json);
    return tasks;
  }

  get #tx(): Transactions {
    if (this.#transactions === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#transactions;
  }

  get #targetViews(): TargetViews {
    if (this.#targets === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#targets;
  }

  #listingOf(): TaskListing {
    if (this.#listing === undefined) throw new Error('SqliteStore: call init() before using the store.');
    return this.#listing;
  }
}

/** How many queues `nextDueAt` reads the head of before it settles for a hint. */
const NEXT_DUE_PROBES = 16;
