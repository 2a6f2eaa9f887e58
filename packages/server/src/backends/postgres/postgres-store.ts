import { PostgresCallbacksOwed } from './callbacks-owed.js';
import type { CallbackOutbox } from '../../store/callback-outbox.js';
import type pg from 'pg';
import { TaskStatus } from '@retryd/core';
import { completeAlongsideClaim } from '../../store/complete-and-claim.js';
import { checkNewTasks } from '../../store/new-tasks.js';
import type { AttemptLog, Page, RetryTask, StoredPolicy } from '../../domain/task.js';
import type {
  AccessStore,
  AdminReads,
  AttemptCompletion,
  ClaimOptions,
  ClaimRooms,
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
import { DUE_COUNT_CAP } from '../../store/store.js';
import { oldestPendingOf, type OldestPending } from '../../store/oldest-pending.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import { DEFAULT_SCHEMA, checkSchemaName, clientConfig, createPool, dueChannel } from './connection.js';
import type { PostgresStoreOptions } from './connection.js';
import { PostgresAccessStore } from './access-store.js';
import { DueListener } from './due-listener.js';
import { postgresFailure, postgresStoreError, storeError } from './errors.js';
import { EnqueueStatements } from './enqueue-statements.js';
import { loadMigrations, migrate } from './migrate.js';
import { taskListing } from './paging.js';
import { PostgresBlobStore } from './postgres-blob-store.js';
import { loadQueries } from './queries.js';
import { PostgresSealedTasks } from './sealed-tasks.js';
import { TaskVacuum } from './task-vacuum.js';
import { targetFromRow, targetPage, targetPageStart } from './target-view.js';
import type { TargetRow } from './target-view.js';
import type { Queries, QueryName } from './queries.js';
import { attemptFromRow } from '../sql/sql-rows.js';
import type { AttemptRow } from '../sql/sql-rows.js';
import { completionArrays } from './completion-columns.js';
import { purgedFromRow, taskFromRow } from './task-row.js';
import type { CompletedRow, TaskRow } from './task-row.js';
import { CANCELLED_STATUS, CANCEL_AT_ONCE_FROM, CANCEL_REQUEST_FROM, FINISHED_STATUSES, REPLAYED_STATUS, REPLAY_FROM, RESCHEDULED_STATUS, RESCHEDULE_FROM } from '../../store/transition-guards.js';
import { checkDeleteBatch } from '../../store/delete-batch.js';
import { taskIdText } from '../sql/task-id-params.js';
import { translateFailures } from '../../store/failure-boundary.js';

/** Runs one of the store's statements (by file name) on a pooled connection. */
export type RunQuery = <R extends pg.QueryResultRow>(
  name: QueryName,
  values: unknown[],
) => Promise<pg.QueryResult<R>>;

/**
 * The shared store: tasks, attempts, policies, target queues, target state and blobs in one PostgreSQL schema, used
 * by any number of retryd instances at once. It is its own {@link AdminReads} and {@link TargetStateStore}; API keys
 * and tenant limits are its `access` (access-store.ts).
 *
 * Every operation is one statement, i.e. one round trip and one commit: a batch (`insertTasks`, `claimDue`,
 * `completeAttempts`, `releaseLeases`) is a single multi-row statement over a JSON array or column arrays, so 1,000 tasks cost one
 * write-ahead-log flush. (An insert that names a target for the first time makes its queue first, in a statement of
 * its own, and goes again: see insert-tasks.sql.) Each statement is a named prepared statement from `queries/*.sql`,
 * parsed once per connection. Claims find the ready target queues through `target_queues` (a held target is never entered), share
 * their slots among them round robin, and take `FOR UPDATE SKIP LOCKED` rows through the partial due index, so
 * concurrent claims from any number of instances never return the same task (see `claim-due.sql`); completions are
 * fenced by token in the same statement that logs the attempt. Named transitions are guarded by the statuses core's
 * lifecycle allows them from, inside their statement. Statements that leave a task PENDING, and the end of a hold,
 * `NOTIFY retryd_due_<schema>` at commit, which {@link PostgresStore.onDue} listens for.
 *
 * While the server is unreachable, calls reject with a `STORE_UNAVAILABLE` error within `connectTimeoutMs`;
 * the pool reconnects by itself when it is back.
 *
 * @example
 * ```ts
 * const store = new PostgresStore({ connectionString: 'postgres://retryd@db:5432/retryd', schema: 'retryd' });
 * await store.init();
 * ```
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  /**
   * Enqueue writes in flight at once: the server works on one while the service prepares the next, and concurrent
   * inserts of one key are settled by `ON CONFLICT` (see insert-tasks.sql). Two of the pool's connections at most.
   */
  readonly concurrentInserts = 2;
  /** The schema holding the store's tables. */
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly #channel: string;
  readonly #listener: DueListener;
  readonly #vacuum: TaskVacuum;
  /** The statements of an enqueue, shared with the transactional enqueue (enqueue-statements.ts). */
  readonly #statements: EnqueueStatements;
  #queries: Queries | undefined;
  #blobs: PostgresBlobStore | undefined;
  #access: PostgresAccessStore | undefined;
  #sealing: PostgresSealedTasks | undefined;
  #callbacks: PostgresCallbacksOwed | undefined;
  #closing: Promise<void> | undefined;

  /** Checks the options and creates the pool (no connection yet); `init()` connects and migrates. */
  constructor(options: PostgresStoreOptions) {
    this.schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA, '`schema`');
    this.#pool = createPool(options, this.schema);
    this.#channel = dueChannel(this.schema);
    const onError = options.onError ?? (() => undefined);
    this.#listener = new DueListener(clientConfig(options, this.schema), this.#channel, onError);
    this.#vacuum = new TaskVacuum(this.#pool, this.schema, { intervalMs: options.vacuumIntervalMs ?? 5_000, minChanges: 1_000, onError });
    this.#statements = new EnqueueStatements((name, values) => this.#run(name, values), this.#channel);
  }

  async init(): Promise<void> {
    if (this.#queries !== undefined) return;
    try {
      await migrate(this.#pool, this.schema, loadMigrations());
    } catch (error) {
      throw storeError(error);
    }
    this.#queries = await loadQueries();
    this.#vacuum.start();
  }

  async ping(): Promise<void> {
    await this.#run('ping', []);
  }

  /** Stops listening and closes every connection once the calls in progress have finished. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#vacuum.close();
      await this.#listener.close();
      await this.#pool.end();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** This store: it serves the admin reads itself. */
  get admin(): AdminReads {
    return this;
  }

  /** This store: it keeps per-target state itself. */
  get targetState(): TargetStateStore {
    return this;
  }

  /** API keys and tenant limits, in this store's schema and pool (access-store.ts). */
  get access(): AccessStore {
    this.#access ??= new PostgresAccessStore((name, values) => this.#run(name, values));
    return this.#access;
  }

  /** Large bodies, in this store's schema and pool (closed with the store). */
  get blobs(): PostgresBlobStore {
    this.#blobs ??= new PostgresBlobStore((name, values) => this.#run(name, values));
    return this.#blobs;
  }

  /** Sealed secrets and their re-seal under a new key, in this store's schema and pool (see sealed-tasks.ts). */
  /** The callbacks owed by ended tasks (see callbacks-owed.ts). */
  get callbacks(): CallbackOutbox {
    this.#callbacks ??= new PostgresCallbacksOwed((name, values) => this.#run(name, values));
    return this.#callbacks;
  }

  get sealing(): SealedTaskStore {
    this.#sealing ??= new PostgresSealedTasks((name, values) => this.#run(name, values));
    return this.#sealing;
  }

  // ---- tasks ---------------------------------------------------------------------------------------

  insertTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    return this.#statements.insertTasks(tasks);
  }

  /**
   * {@link insertTasks} in two steps (`Store.insertTasksVisible`): the insert commits without waiting for its WAL flush
   * (insert-tasks.sql's `$10`), and answers once its tasks are visible; `durable` resolves when flush-wal.sql, sent
   * after it, has flushed the WAL past its commit. A hand-off's attempt then starts a flush earlier (W4's dispatch
   * lag); the enqueue still answers only once `durable` has.
   */
  async insertTasksVisible(tasks: readonly RetryTask[]): Promise<VisibleInsert> {
    checkNewTasks(tasks);
    if (tasks.length === 0) return { results: [], durable: Promise.resolve() };
    // Both statements on one connection: the flush is sent the moment the insert answers, with no wait for another
    // connection of the pool.
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw postgresStoreError(error);
    }
    // A checked-out client's connection that fails emits 'error', which would end the process without a listener (the
    // pool listens only to idle ones); its statement rejects with the failure all the same.
    const ignore = (): void => undefined;
    client.on('error', ignore);
    const release = (error?: unknown): void => {
      client.off('error', ignore);
      // A connection that failed or was refused mid-call is dropped, not given back in whatever state it was left.
      client.release(error === undefined ? undefined : error instanceof Error ? error : true);
    };
    const run: RunQuery = (name, values) => this.#query(client, name, values);
    let results: InsertResult[];
    try {
      results = await new EnqueueStatements(run, this.#channel).insertStoredTasks(tasks, true);
    } catch (error) {
      release(error);
      throw error;
    }
    const durable = run('flush-wal', []).then(
      () => release(),
      (error: unknown) => {
        release(error);
        throw error;
      },
    );
    // The enqueue awaits it; a rejection must not end the process meanwhile.
    durable.catch(() => undefined);
    return { results, durable };
  }

  /**
   * Inserts tasks as given, in any status ({@link insertTasks} takes only new ones): for tests that need a task that
   * has already ended, without driving it there through claims and completions (River keeps `JobInsertFull` apart from
   * `JobInsertFast` the same way). Not on the `Store` port, and nothing in the service calls it.
   */
  insertStoredTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    return this.#statements.insertStoredTasks(tasks);
  }

  async getTask(tenantId: string, taskId: string): Promise<RetryTask | undefined> {
    return this.#one('get-task', [tenantId, taskIdText(taskId)]);
  }

  async listTasks(query: TaskQuery): Promise<Page<RetryTask>> {
    const { name, values } = taskListing(query);
    const rows = (await this.#run<TaskRow>(name, values)).rows.map(taskFromRow);
    return pageOf(rows, query.limit, (t) => encodeCursor('tasks', [t.createdAt, t.taskId]));
  }

  async cancelTask(ref: TaskRef, now: number, expiresAt: number): Promise<TransitionResult> {
    return this.#transition(ref, 'cancel-task', [CANCEL_AT_ONCE_FROM, CANCELLED_STATUS, now, expiresAt]);
  }

  async requestCancel(ref: TaskRef, now: number): Promise<TransitionResult> {
    return this.#transition(ref, 'request-cancel', [CANCEL_REQUEST_FROM, now]);
  }

  async replayTask(ref: TaskRef, change: ReplayChange): Promise<TransitionResult> {
    const { expectedVersion, nextAttemptAt, runAttemptOffset, runStartedAt, updatedAt } = change;
    const values = [expectedVersion, REPLAY_FROM, REPLAYED_STATUS, nextAttemptAt, runAttemptOffset, runStartedAt, updatedAt, this.#channel];
    return this.#transition(ref, 'replay-task', values);
  }

  async rescheduleTask(ref: TaskRef, change: RescheduleChange): Promise<TransitionResult> {
    const { expectedVersion, nextAttemptAt, updatedAt } = change;
    const values = [expectedVersion, RESCHEDULE_FROM, RESCHEDULED_STATUS, nextAttemptAt, updatedAt, this.#channel];
    return this.#transition(ref, 'reschedule-task', values);
  }

  /** Runs a guarded transition on one task; when its guard refuses, reads the task as it is to say why. */
  async #transition(ref: TaskRef, name: 'cancel-task' | 'request-cancel' | 'replay-task' | 'reschedule-task', values: unknown[]): Promise<TransitionResult> {
    const changed = await this.#one(name, [ref.tenantId, taskIdText(ref.taskId), ...values]);
    if (changed !== undefined) return { kind: 'applied', task: changed };
    const current = await this.getTask(ref.tenantId, ref.taskId);
    return current === undefined ? { kind: 'not_found' } : { kind: 'refused', task: current };
  }

  // ---- retention -----------------------------------------------------------------------------------

  /**
   * One statement (purge-expired.sql): the earliest expired tasks through the partial index `tasks_expiry`, locked
   * `FOR UPDATE SKIP LOCKED` (concurrent purges never delete the same task), deleted with their attempts.
   */
  async purgeExpired(now: number, limit: number): Promise<PurgedTask[]> {
    if (limit <= 0) return [];
    const purged = (await this.#run<TaskRow>('purge-expired', [now, limit])).rows.map(purgedFromRow);
    // Deleted rows are dead rows until a vacuum, like rewritten ones (012-task-retention.sql), attempts' too.
    this.#vacuum.noteDeletions(purged.length);
    return purged;
  }

  /** One statement (delete-finished-tasks.sql): each task by its key, locked, deleted if still finished at its version. */
  async deleteFinishedTasks(tenantId: string, tasks: readonly ListedTask[]): Promise<PurgedTask[]> {
    checkDeleteBatch(tasks);
    if (tasks.length === 0) return [];
    const values = [tenantId, tasks.map((t) => taskIdText(t.taskId)), tasks.map((t) => t.version), FINISHED_STATUSES];
    const deleted = (await this.#run<TaskRow>('delete-finished-tasks', values)).rows.map(purgedFromRow);
    this.#vacuum.noteDeletions(deleted.length);
    return deleted;
  }

  // ---- scheduling ----------------------------------------------------------------------------------

  async claimDue(now: number, options: ClaimOptions): Promise<RetryTask[]> {
    if (options.limit <= 0) return [];
    const { after } = options;
    const values = [now, options.limit, options.workerId, now + options.leaseMs, after?.tenantId ?? null, after?.targetKey ?? null, ...roomParams(options.rooms)];
    const claimed = (await this.#run<TaskRow>('claim-due', values)).rows.map(taskFromRow);
    this.#vacuum.noteChanges(claimed.length);
    return claimed;
  }

  async nextDueAt(): Promise<number | null> {
    return (await this.#run<{ at: number }>('next-due-at', [])).rows[0]?.at ?? null;
  }

  async findExpiredLeases(now: number, limit: number): Promise<RetryTask[]> {
    return (await this.#run<TaskRow>('find-expired-leases', [now, limit])).rows.map(taskFromRow);
  }

  async nextLeaseExpiryAt(): Promise<number | null> {
    return (await this.#run<{ at: number }>('next-lease-expiry-at', [])).rows[0]?.at ?? null;
  }

  /**
   * Two statements sent at once on two pooled connections: one round trip of latency, two commits that the server's
   * group commit may flush together. One statement would save a commit, but a retry among the completions and the
   * claim's refresh could then write the same target queue row twice in one statement, and PostgreSQL keeps only one
   * of two such writes, unpredictably (a lost version bump could let a late hint through).
   */
  completeAndClaim(completions: readonly AttemptCompletion[], now: number, claim: ClaimOptions): Promise<CompleteAndClaimResult> {
    return completeAlongsideClaim(this, completions, now, claim);
  }

  async completeAttempts(completions: readonly AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    if (completions.length === 0) return [];
    const applied = await this.#run<CompletedRow>('complete-attempts', [now, ...completionArrays(completions)]);
    this.#vacuum.noteChanges(applied.rows.length);
    const byIndex = new Map(applied.rows.map((row) => [row.i, row]));
    return completions.map(({ taskId }, i): CompletionResult => {
      const row = byIndex.get(i);
      if (row === undefined) return { kind: 'fenced_out', taskId };
      const { status, next_attempt_at: nextAttemptAt, version, cancel_requested: cancelRequested } = row;
      return { kind: 'applied', taskId, status, nextAttemptAt, version, cancelRequested };
    });
  }

  async extendLease(tenantId: string, taskId: string, fencingToken: number, leaseExpiresAt: number): Promise<boolean> {
    return (await this.#run('extend-lease', [tenantId, taskIdText(taskId), fencingToken, leaseExpiresAt])).rowCount === 1;
  }

  async releaseLeases(leases: readonly LeaseRef[], now: number): Promise<number> {
    if (leases.length === 0) return 0;
    const records = JSON.stringify(
      leases.map((lease) => ({ tenant_id: lease.tenantId, task_id: taskIdText(lease.taskId), fencing_token: lease.fencingToken })),
    );
    const result = await this.#run<{ released: number }>('release-leases', [records, now, this.#channel]);
    return result.rows[0]?.released ?? 0;
  }

  // ---- the target gate -----------------------------------------------------------------------------

  async holdTarget(target: TargetRef, until: number, _now: number): Promise<void> {
    await this.#run('hold-target', [target.tenantId, target.targetKey, until]);
  }

  async releaseTarget(target: TargetRef, _now: number): Promise<void> {
    await this.#run('release-target', [target.tenantId, target.targetKey, this.#channel]);
  }

  async limitTarget(target: TargetRef, limits: TargetLimits, now: number): Promise<void> {
    const { ratePerSecond, burst, maxInFlight } = limits;
    await this.#run('limit-target', [target.tenantId, target.targetKey, ratePerSecond, burst, maxInFlight, now, this.#channel]);
  }

  // ---- attempts ------------------------------------------------------------------------------------

  async listAttempts(tenantId: string, taskId: string, page: PageRequest): Promise<Page<AttemptLog>> {
    const after = page.cursor === undefined ? 0 : (decodeCursor('attempts', page.cursor, 'n')[0] as number);
    const rows = await this.#run<AttemptRow>('list-attempts', [tenantId, taskIdText(taskId), after, page.limit + 1]);
    return pageOf(rows.rows.map(attemptFromRow), page.limit, (a) => encodeCursor('attempts', [a.attemptNumber]));
  }

  // ---- policies ------------------------------------------------------------------------------------

  putPolicy(policy: StoredPolicy, mode: 'create' | 'replace'): Promise<PutPolicyResult> {
    return this.#statements.putPolicy(policy, mode);
  }

  getPolicy(tenantId: string, policyId: string): Promise<StoredPolicy | undefined> {
    return this.#statements.getPolicy(tenantId, policyId);
  }

  listPolicies(tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>> {
    return this.#statements.listPolicies(tenantId, page);
  }

  // ---- per-target state ----------------------------------------------------------------------------

  getTargetState(tenantId: string, key: string): Promise<TargetState | undefined> {
    return this.#statements.getTargetState(tenantId, key);
  }

  async putTargetState(
    tenantId: string,
    key: string,
    expectedVersion: number,
    value: string,
    now: number,
  ): Promise<boolean> {
    const result =
      expectedVersion === 0
        ? await this.#run('insert-target-state', [tenantId, key, value, now])
        : await this.#run('update-target-state', [tenantId, key, expectedVersion, value, now]);
    return result.rowCount === 1;
  }

  // ---- wake-ups ------------------------------------------------------------------------------------

  /**
   * Calls `listener` whenever any store on this schema (this process or another) inserts a PENDING task,
   * replays one, hands leases back, or ends a target's hold. The first subscriber opens one dedicated LISTEN
   * connection, which reconnects by itself after an outage (and then calls every listener once, since
   * notifications sent meanwhile are lost); the last unsubscribe closes it. Listener errors go to `onError`.
   */
  onDue(listener: (dueAt?: number) => void): () => void {
    return this.#listener.subscribe(listener);
  }

  /** Resolves once the LISTEN behind {@link onDue} is in place (after a subscription): for start-up and tests. */
  whenListening(): Promise<void> {
    return this.#listener.listening();
  }

  // ---- admin reads -------------------------------------------------------------------------------

  async getTaskByIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<RetryTask | undefined> {
    return this.#one('get-task-by-key', [tenantId, idempotencyKey]);
  }

  async countByStatus(tenantId?: string): Promise<Record<TaskStatus, number>> {
    const counts = Object.fromEntries(Object.values(TaskStatus).map((s) => [s, 0])) as Record<TaskStatus, number>;
    type Row = { status: TaskStatus; n: number };
    const result =
      tenantId === undefined
        ? await this.#run<Row>('count-by-status', [])
        : await this.#run<Row>('count-by-status-of-tenant', [tenantId]);
    for (const { status, n } of result.rows) counts[status] += n;
    return counts;
  }

  async listTargets(tenantId: string, page: PageRequest, now: number): Promise<Page<TargetView>> {
    return targetPage(await this.#targets(tenantId, targetPageStart(page.cursor), page.limit + 1, now), page.limit);
  }

  /** The same statement as a page: one target from its key, if the first one found is this one. */
  async getTarget(target: TargetRef, now: number): Promise<TargetView | undefined> {
    const [first] = await this.#targets(target.tenantId, target.targetKey, 1, now);
    return first?.targetKey === target.targetKey ? first : undefined;
  }

  /** Each tenant's PENDING stretch of tasks_by_status, oldest first, a page at a time (oldest-pending-page.sql). */
  async oldestPending(limit: number): Promise<OldestPending[]> {
    const tenants = (await this.#run<{ tenant_id: string }>('queue-tenants', [])).rows.map((row) => row.tenant_id);
    type Row = { target_key: string; created_at: number; task_id: string };
    return oldestPendingOf<Row>(
      tenants,
      async (tenantId, after, size) => {
        const { rows } = await this.#run<Row>('oldest-pending-page', [tenantId, after?.created_at ?? -Infinity, after?.task_id ?? NIL_UUID, size]);
        const pending = rows.map((row) => ({ targetKey: row.target_key, createdAt: row.created_at }));
        return { pending, read: rows.length, next: rows.length === size ? rows.at(-1) : undefined };
      },
      limit,
    );
  }

  async #targets(tenantId: string, from: string, rows: number, now: number): Promise<TargetView[]> {
    const result = await this.#run<TargetRow>('list-targets', [tenantId, from, rows, now, DUE_COUNT_CAP]);
    return result.rows.map(targetFromRow);
  }

  async #one(name: 'get-task' | 'get-task-by-key' | 'cancel-task' | 'request-cancel' | 'replay-task' | 'reschedule-task', values: unknown[]): Promise<RetryTask | undefined> {
    const row = (await this.#run<TaskRow>(name, values)).rows[0];
    return row === undefined ? undefined : taskFromRow(row);
  }

  /**
   * Every statement of the public methods goes through here (the enqueue statements and the smaller classes too), and
   * its failure is named once (see failure-boundary.ts): wrapping each method as well would cost a closure and a
   * `.catch` a call for nothing.
   */
  #run<R extends pg.QueryResultRow>(name: QueryName, values: unknown[]): Promise<pg.QueryResult<R>> {
    return this.#query(this.#pool, name, values);
  }

  /** One of the store's statements on the pool, or on a connection checked out of it, with the store's errors. */
  async #query<R extends pg.QueryResultRow>(on: pg.Pool | pg.PoolClient, name: QueryName, values: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.#queries === undefined) throw new Error('PostgresStore: call init() before using the store.');
    try {
      return await on.query<R>({ ...this.#queries[name], values });
    } catch (error) {
      throw postgresStoreError(error);
    }
  }
}

/** The first page's task id in `oldest-pending-page` (the position is `-Infinity` first: any id will do). */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** `claim-due.sql`'s $7-$12: a claim's rooms as arrays and defaults, or all null without rooms. */
function roomParams(rooms: ClaimRooms | undefined): unknown[] {
  if (rooms === undefined) return [null, null, null, null, null, null];
  const queues: string[] = [];
  const queueRooms: number[] = [];
  for (const [tenantId, byKey] of rooms.targets) {
    for (const [targetKey, room] of byKey) {
      // Neither a tenant id nor an origin holds a line feed.
      queues.push(`${tenantId}\n${targetKey}`);
      queueRooms.push(room);
    }
  }
  return [queues, queueRooms, [...rooms.tenants.keys()], [...rooms.tenants.values()], rooms.target, rooms.tenant];
}

// The methods that reach the driver without `#run`: the migration, the pool's and listener's shutdown, the LISTEN.
translateFailures(PostgresStore, postgresFailure, ['init', 'close', 'whenListening']);
