import { checkNewTasks } from '../../store/new-tasks.js';
import type { Page, RetryTask, StoredPolicy } from '../../domain/task.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import type { InsertResult, PageRequest, PutPolicyResult, Store, TargetState, TargetStateStore } from '../../store/store.js';
import { insertTaskValues } from './insert-records.js';
import { insertResults, type InsertedKeys } from './insert-results.js';
import type { RunQuery } from './postgres-store.js';
import { policyFromRow, taskFromRow, type PolicyRow, type TaskRow } from './task-row.js';

/** The store operations an enqueue needs: the insert, and what the policy registry and the ceilings read. */
export type EnqueueOperations = Pick<Store, 'kind' | 'insertTasks' | 'putPolicy' | 'getPolicy' | 'listPolicies'> & Pick<TargetStateStore, 'getTargetState'>;

/**
 * The statements an enqueue runs, over whichever connection `run` uses: the store's pool (`PostgresStore`), or an
 * application's own client inside its open transaction (the transactional enqueue of `@retryd/server/pg`). One copy of
 * each, so both write tasks, find their duplicates and read policies and ceilings alike.
 *
 * @example
 * ```ts
 * const statements = new EnqueueStatements((name, values) => pool.query({ ...queries[name], values }), dueChannel(schema));
 * const [result] = await statements.insertTasks([task]); // { kind: 'inserted', task } or { kind: 'duplicate', task: stored }
 * ```
 */
export class EnqueueStatements implements EnqueueOperations {
  readonly kind = 'postgres';
  readonly #run: RunQuery;
  readonly #channel: string;

  /**
   * @param run - runs the store's statements on a connection whose search path is the store's schema
   * @param channel - the wake-up channel (`dueChannel(schema)`), notified at commit when a PENDING task is inserted
   */
  constructor(run: RunQuery, channel: string) {
    this.#run = run;
    this.#channel = channel;
  }

  /**
   * Inserts a batch in one statement (insert-tasks.sql); a key already stored, or repeated earlier in the batch, gives
   * `duplicate` with the task that holds it. A concurrent insert of the same key is waited for (`ON CONFLICT`).
   */
  async insertTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    checkNewTasks(tasks);
    return this.insertStoredTasks(tasks);
  }

  /**
   * {@link insertTasks} in any status, unchecked: `PostgresStore.insertStoredTasks`, for tests. `asyncCommit`: the
   * statement commits without waiting for its WAL flush (insert-tasks.sql's `$10`); never in a caller's transaction.
   */
  async insertStoredTasks(tasks: readonly RetryTask[], asyncCommit = false): Promise<InsertResult[]> {
    if (tasks.length === 0) return [];
    const values = insertTaskValues(tasks, this.#channel, asyncCommit);
    const [, , , , tenants, keys] = values;
    let inserted = await this.#insert(values);
    if (inserted.queue_missing) {
      // A target seen for the first time: its queue is made by a statement of its own (insert-tasks.sql says why),
      // then the batch goes again. A queue is never deleted, so the second call finds every one.
      await this.#run('add-target-queues', [tenants, keys]);
      inserted = await this.#insert(values);
      if (inserted.queue_missing) throw new Error('PostgresStore: a target queue made for an insert is missing.');
    }
    return insertResults(tasks, insertedKeys(inserted, tasks.length), async (unknown) => {
      const values = [unknown.map((task) => task.tenantId), unknown.map((task) => task.idempotencyKey)];
      return (await this.#run<TaskRow>('select-tasks-by-keys', values)).rows.map(taskFromRow);
    });
  }

  async #insert(values: unknown[]): Promise<InsertedRow> {
    const row = (await this.#run<InsertedRow>('insert-tasks', values)).rows[0];
    if (row === undefined) throw new Error('PostgresStore: insert-tasks returned no row.');
    return row;
  }

  async putPolicy(policy: StoredPolicy, mode: 'create' | 'replace'): Promise<PutPolicyResult> {
    const { tenantId, policyId } = policy;
    const definition = JSON.stringify(policy.policy);
    const callback = policy.callback === null ? null : JSON.stringify(policy.callback);
    if (mode === 'replace') {
      const replaced = await this.#run<PolicyRow>('replace-policy', [tenantId, policyId, definition, policy.updatedAt, callback]);
      const row = replaced.rows[0];
      return row === undefined ? { kind: 'not_found' } : { kind: 'replaced', policy: policyFromRow(row) };
    }
    const values = [tenantId, policyId, definition, policy.createdAt, policy.updatedAt, policy.version, callback];
    if ((await this.#run('insert-policy', values)).rowCount === 1) return { kind: 'created', policy };
    const stored = await this.getPolicy(tenantId, policyId);
    if (stored === undefined) throw new Error(`Policy ${policyId} was neither created nor found.`);
    return { kind: 'exists', policy: stored };
  }

  async getPolicy(tenantId: string, policyId: string): Promise<StoredPolicy | undefined> {
    const row = (await this.#run<PolicyRow>('get-policy', [tenantId, policyId])).rows[0];
    return row === undefined ? undefined : policyFromRow(row);
  }

  async listPolicies(tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>> {
    const after = page.cursor === undefined ? '' : (decodeCursor('policies', page.cursor, 's')[0] as string);
    const rows = await this.#run<PolicyRow>('list-policies', [tenantId, after, page.limit + 1]);
    return pageOf(rows.rows.map(policyFromRow), page.limit, (p) => encodeCursor('policies', [p.policyId]));
  }

  async getTargetState(tenantId: string, key: string): Promise<TargetState | undefined> {
    type Row = { value: string; version: number; updated_at: number };
    const row = (await this.#run<Row>('get-target-state', [tenantId, key])).rows[0];
    return row === undefined ? undefined : { value: row.value, version: row.version, updatedAt: row.updated_at };
  }
}

/** The row of `insert-tasks`: how many tasks it inserted, their keys when not all, and whether a queue was missing. */
type InsertedRow = { inserted: number; tenant_ids: string[] | null; task_ids: string[] | null; queue_missing: boolean };

/** The keys of the tasks `insert-tasks` inserted, or 'all' when it inserted every one of the batch's `count`. */
function insertedKeys(row: InsertedRow, count: number): InsertedKeys {
  if (row.inserted === count) return 'all';
  const tenants = row.tenant_ids ?? [];
  return (row.task_ids ?? []).map((taskId, i) => ({ tenantId: tenants[i] as string, taskId }));
}
