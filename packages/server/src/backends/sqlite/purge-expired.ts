import type { Database, Transaction } from 'better-sqlite3';
import type { ListedTask, PurgedTask } from '../../store/store.js';
import { checkDeleteBatch } from '../../store/delete-batch.js';
import { FINISHED_STATUSES } from '../../store/transition-guards.js';
import { hyphenatedUuid, taskIdKey } from '../sql/task-id-params.js';
import { AUTO_VACUUM_NAMES } from './connection.js';
import { prepare } from './prepared.js';
import { statusIn, statusOfCode } from './status-guards.js';

// Retention's deletes (`Store.purgeExpired`): the ended tasks whose `expires_at` has passed, found through
// `tasks_expiry` (011-retention.sql), each with its attempt log; then some of the pages they freed given back to the
// file system. The deletes by hand (`Store.deleteFinishedTasks`) go the same way, each task found by its key.

/**
 * The expired tasks, earliest first. Params: `now`, `limit`. Returns raw {@link ExpiredRow}s. Walks `tasks_expiry`
 * from its start and stops after `limit` entries or at the first one past `now`: tasks not expired yet are never
 * read, and live tasks and tasks kept for good (NULL) are not in the index at all (`expires_at <= ?` implies its
 * `expires_at IS NOT NULL`, so the planner may use it). Each row is then read by rowid, the way it is deleted. A task
 * whose callback is still owed (013-callbacks.sql) is kept until the relay made it: the callback reads the task.
 */
export const SELECT_EXPIRED = `
SELECT rowid, tenant_id, task_id, status, body_ref FROM tasks
WHERE expires_at <= ?
  AND NOT EXISTS (SELECT 1 FROM callbacks_owed AS o WHERE o.tenant_id = tasks.tenant_id AND o.task_id = tasks.task_id)
ORDER BY expires_at
LIMIT ?`;

/**
 * One task to delete by hand (`Store.deleteFinishedTasks`), if it is still finished at the version listed. Params:
 * `tenantId`, `taskId` (its bytes), `version`. Read through `tasks_pk`. Kept, as by the purge, while its callback is owed.
 */
export const SELECT_FINISHED = `
SELECT rowid, status, body_ref FROM tasks
WHERE tenant_id = ? AND task_id = ? AND version = ? AND ${statusIn(FINISHED_STATUSES)}
  AND NOT EXISTS (SELECT 1 FROM callbacks_owed AS o WHERE o.tenant_id = tasks.tenant_id AND o.task_id = tasks.task_id)`;

/** A {@link SELECT_FINISHED} row. */
type FinishedRow = [rowid: number, status: number, bodyRef: string | null];

/** A {@link SELECT_EXPIRED} row: the task id as its 16 bytes, the status as its number (status-guards.ts). */
type ExpiredRow = [rowid: number, tenantId: string, taskId: Buffer, status: number, bodyRef: string | null];

/** A task's attempt log. Params: `tenantId`, `taskId` (its bytes). One range of the `attempts` primary key. */
export const DELETE_ATTEMPTS = 'DELETE FROM attempts WHERE tenant_id = ? AND task_id = ?';

/**
 * One task, by rowid. Params: `rowid`. Its entries leave every index that holds one: `tasks_pk`, `tasks_expiry`,
 * `tasks_ended`, and `tasks_idempotency_key`, which frees its idempotency key for a new task.
 */
export const DELETE_TASK = 'DELETE FROM tasks WHERE rowid = ?';

/**
 * At most this many free pages are given back to the file system after each purge batch (`PRAGMA
 * incremental_vacuum`): 256, 1 MiB with the default 4 KiB pages. A batch of 500 tasks with 300-byte bodies frees
 * about 85 pages, with 3 KB bodies about 500.
 *
 * Each page given back moves the file's last page into a free slot (the page, its parent and the pointer map written
 * again), in the batch's transaction, which holds the write lock (and, better-sqlite3 being synchronous, this
 * process's event loop) that claims and completions wait for: the bound keeps that cost well under the batch's own
 * deletes. Measured on batches of 500 tasks with 3 KB bodies and their attempts (synchronous FULL, two cores): a batch
 * took 17 ms (median) without giving pages back, 21.5 ms with 256, 34 ms with 512. A freelist larger than the bound
 * (large bodies, a backlog of expired tasks) shrinks by this much per batch, and per idle look of the purger (an empty
 * batch still gives pages back); meanwhile new rows reuse free pages first, so the file does not grow.
 */
export const PURGE_VACUUM_PAGES = 256;

/**
 * The SQLite store's `purgeExpired`: one IMMEDIATE transaction that selects at most `limit` expired tasks (earliest
 * first, through `tasks_expiry`), deletes each one's attempt log and row, and, in a database in `auto_vacuum =
 * INCREMENTAL` mode (one created by this version: see connection.ts), gives up to {@link PURGE_VACUUM_PAGES} free
 * pages back to the file system (in WAL mode the file shrinks at the next checkpoint). A database in another mode
 * keeps its free pages for new rows: the store never runs a `VACUUM` by itself.
 *
 * Target queues are not touched: an ended task is in no queue's due index nor in its in-flight count, and a queue's
 * row is never deleted (010-task-keys-as-numbers.sql).
 */
export class ExpiredTaskPurge {
  readonly #purge: Transaction<(now: number, limit: number) => PurgedTask[]>;
  readonly #deleteFinished: Transaction<(tenantId: string, tasks: readonly ListedTask[]) => PurgedTask[]>;

  constructor(db: Database) {
    const select = prepare<[now: number, limit: number], ExpiredRow>(db, SELECT_EXPIRED, true);
    const selectFinished = prepare<[tenantId: string, taskId: Buffer, version: number], FinishedRow>(db, SELECT_FINISHED, true);
    const deleteAttempts = prepare<[tenantId: string, taskId: Buffer]>(db, DELETE_ATTEMPTS);
    const deleteTask = prepare<[rowid: number]>(db, DELETE_TASK);
    const remove = (rowid: number, tenantId: string, taskId: Buffer, status: number, bodyRef: string | null): PurgedTask => {
      deleteAttempts.run(tenantId, taskId);
      const id = hyphenatedUuid(taskId.toString('hex'));
      if (deleteTask.run(rowid).changes !== 1) throw new Error(`Task ${id} was read for deletion but could not be deleted.`);
      return { tenantId, taskId: id, status: statusOfCode(status), bodyRef };
    };
    this.#purge = db.transaction((now: number, limit: number): PurgedTask[] => {
      const purged = select.all(now, limit).map(([rowid, tenantId, taskId, status, bodyRef]) => remove(rowid, tenantId, taskId, status, bodyRef));
      giveFreePagesBack(db);
      return purged;
    });
    this.#deleteFinished = db.transaction((tenantId: string, tasks: readonly ListedTask[]): PurgedTask[] => {
      const deleted: PurgedTask[] = [];
      for (const { taskId, version } of tasks) {
        // An id of another form is no task's. Each id is read in turn: one given twice is gone the second time.
        const key = taskIdKey(taskId);
        const row = key === null ? undefined : selectFinished.get(tenantId, key, version);
        if (row !== undefined && key !== null) deleted.push(remove(row[0], tenantId, key, row[1], row[2]));
      }
      giveFreePagesBack(db);
      return deleted;
    });
  }

  /** Deletes at most `limit` tasks expired by `now`, earliest first, and returns them. */
  purge(now: number, limit: number): PurgedTask[] {
    return this.#purge.immediate(now, limit);
  }

  /** Deletes a tenant's tasks that are still finished at the version listed (`Store.deleteFinishedTasks`), in one transaction. */
  deleteFinished(tenantId: string, tasks: readonly ListedTask[]): PurgedTask[] {
    checkDeleteBatch(tasks);
    return tasks.length === 0 ? [] : this.#deleteFinished.immediate(tenantId, tasks);
  }
}

/**
 * `PRAGMA incremental_vacuum` of up to {@link PURGE_VACUUM_PAGES} pages, in INCREMENTAL mode with free pages only.
 * The mode is read at each batch (a header field, cheap next to the deletes), so a file converted by hand
 * (011-retention.sql) is seen without a restart. Run through `exec`, which steps the pragma to its end: SQLite gives
 * back one page per step, and a prepared statement's `run()` steps once.
 */
function giveFreePagesBack(db: Database): void {
  if (AUTO_VACUUM_NAMES[Number(db.pragma('auto_vacuum', { simple: true }))] !== 'INCREMENTAL') return;
  const free = Number(db.pragma('freelist_count', { simple: true }));
  if (free > 0) db.exec(`PRAGMA incremental_vacuum(${Math.min(free, PURGE_VACUUM_PAGES)})`);
}
