import type { Database, Transaction } from 'better-sqlite3';
import type { CallbackOutbox, OwedCallback } from '../../store/callback-outbox.js';
import { hyphenatedUuid, taskIdKey } from '../sql/task-id-params.js';
import { prepare } from './prepared.js';

// The callbacks owed (`Store.callbacks`): rows of `callbacks_owed`, written by the trigger of 013-callbacks.sql in the
// statement that ends a task with a callback, read and deleted here for the callback relay.

/** The earliest owed callbacks. Params: `limit`. Walks `callbacks_owed_order`. */
export const SELECT_OWED = 'SELECT tenant_id, task_id, owed_at FROM callbacks_owed ORDER BY owed_at LIMIT ?';

/** One owed callback, while it is owed at the time read. Params: `tenantId`, `taskId` (its bytes), `owedAt`. */
export const DELETE_OWED = 'DELETE FROM callbacks_owed WHERE tenant_id = ? AND task_id = ? AND owed_at = ?';

/** A {@link SELECT_OWED} row: the task id as its 16 bytes. */
type OwedRow = [tenantId: string, taskId: Buffer, owedAt: number];

/** The SQLite store's {@link CallbackOutbox}. */
export class SqliteCallbacksOwed implements CallbackOutbox {
  readonly #select;
  readonly #settle: Transaction<(callbacks: readonly OwedCallback[]) => number>;

  constructor(db: Database) {
    this.#select = prepare<[limit: number], OwedRow>(db, SELECT_OWED, true);
    const remove = prepare<[tenantId: string, taskId: Buffer, owedAt: number]>(db, DELETE_OWED);
    this.#settle = db.transaction((callbacks: readonly OwedCallback[]) => {
      let settled = 0;
      for (const { tenantId, taskId, owedAt } of callbacks) {
        const key = taskIdKey(taskId);
        if (key !== null) settled += remove.run(tenantId, key, owedAt).changes;
      }
      return settled;
    });
  }

  async owed(limit: number): Promise<OwedCallback[]> {
    if (limit <= 0) return [];
    return this.#select.all(limit).map(([tenantId, taskId, owedAt]) => ({ tenantId, taskId: hyphenatedUuid(taskId.toString('hex')), owedAt }));
  }

  async settle(callbacks: readonly OwedCallback[]): Promise<number> {
    return callbacks.length === 0 ? 0 : this.#settle.immediate(callbacks);
  }
}
