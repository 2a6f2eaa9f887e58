import type { CallbackOutbox, OwedCallback } from '../../store/callback-outbox.js';
import type { RunQuery } from './postgres-store.js';
import { taskIdText } from '../sql/task-id-params.js';
import { postgresFailure } from './errors.js';
import { translateFailures } from '../../store/failure-boundary.js';

/** A `list-owed-callbacks` row. */
interface OwedRow {
  tenant_id: string;
  task_id: string;
  owed_at: number;
}

/**
 * The PostgreSQL store's {@link CallbackOutbox}: rows of `callbacks_owed`, written by the trigger of 014-callbacks.sql
 * within the statement that ends a task with a callback, read (`list-owed-callbacks.sql`) and deleted
 * (`settle-callbacks.sql`) here for the callback relay. Get it from `PostgresStore.callbacks`; it shares the store's
 * pool.
 */
export class PostgresCallbacksOwed implements CallbackOutbox {
  readonly #run: RunQuery;

  constructor(run: RunQuery) {
    this.#run = run;
  }

  async owed(limit: number): Promise<OwedCallback[]> {
    if (limit <= 0) return [];
    const { rows } = await this.#run<OwedRow>('list-owed-callbacks', [limit]);
    return rows.map((row) => ({ tenantId: row.tenant_id, taskId: row.task_id, owedAt: Number(row.owed_at) }));
  }

  async settle(callbacks: readonly OwedCallback[]): Promise<number> {
    if (callbacks.length === 0) return 0;
    const { rowCount } = await this.#run('settle-callbacks', [
      callbacks.map((c) => c.tenantId),
      callbacks.map((c) => taskIdText(c.taskId)),
      callbacks.map((c) => c.owedAt),
    ]);
    return rowCount ?? 0;
  }
}

translateFailures(PostgresCallbacksOwed, postgresFailure);
