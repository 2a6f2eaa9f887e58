import type { Database, Transaction } from 'better-sqlite3';
import type { Page, RetryTask } from '../../domain/task.js';
import { TASK_FIELDS } from '../../domain/task-fields.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import { sameSealedParts, type SealedParts, type SealedTaskStore } from '../../store/sealed-task-store.js';
import type { PageRequest, TaskRef, TransitionResult } from '../../store/store.js';
import type { JsonCache } from '../../store/json-cache.js';
import { prepare, type Prepared } from './prepared.js';
import { TASK_READ_COLUMNS, taskFromRow, type TaskRow } from './task-row.js';
import { taskIdKey, uuidBytes } from '../sql/task-id-params.js';
import type { TaskIdParam } from './statements.js';

const HEADERS = TASK_FIELDS.headers.column;
const BODY = TASK_FIELDS.body.column;
const SENSITIVE_BODY = TASK_FIELDS.sensitiveBody.column;
/** Less than every task id (a BLOB compares as its bytes, and a shorter prefix first). */
const FIRST_TASK_ID = Buffer.alloc(0);

/**
 * One page of the walk over every tenant's tasks that may hold a sealed value, in `tasks_pk` order. Params: the
 * `(tenant_id, task_id)` the page starts after (`''` and an empty BLOB for the first page: no tenant id is empty, and
 * every task id is 16 bytes), and the rows
 * to return (page size + 1). Returns raw {@link TaskRow}s.
 *
 * A sealed header is stored as `{"enc": …}`, so its JSON text holds `"enc":`; a header value that merely contains
 * those characters holds them escaped (`\"enc\":`) and does not match. A header named `enc` does: a task returned
 * for nothing, which the caller skips. The filter reads each row the walk passes, which is the walk's cost anyway.
 */
export const WALK_SEALED_TASKS = `
SELECT ${TASK_READ_COLUMNS} FROM tasks
WHERE (tenant_id, task_id) > (?, ?) AND (${SENSITIVE_BODY} = 1 OR instr(${HEADERS}, '"enc":') > 0)
ORDER BY tenant_id, task_id
LIMIT ?`;

/**
 * Writes a task's headers (JSON text) and inline body, and nothing else. Params: `headers`, `body`, `tenantId`,
 * `taskId`. Returns the raw {@link TaskRow} after it. The guard (the stored values are the expected ones) is the
 * transaction's: it reads the row first, in the same IMMEDIATE transaction.
 */
export const RESEAL_TASK = `
UPDATE tasks SET ${HEADERS} = ?, ${BODY} = ?
WHERE tenant_id = ? AND task_id = ?
RETURNING ${TASK_READ_COLUMNS}`;

/**
 * The SQLite store's {@link SealedTaskStore}: the walk follows the task key, and a re-seal is one IMMEDIATE
 * transaction that reads the row, compares its headers (as values: a JSON text may order names otherwise) and body
 * with the expected ones, and writes only then. Status, version, lease and `ended_at` are not in the write, so no
 * index of the scheduler is touched.
 */
export class SqliteSealedTasks implements SealedTaskStore {
  readonly #walk: Prepared<[afterTenantId: string, afterTaskId: Buffer, rows: number], TaskRow>;
  readonly #json: JsonCache;
  readonly #reseal: Transaction<(ref: TaskRef, expected: SealedParts, next: SealedParts) => TransitionResult>;

  constructor(db: Database, json: JsonCache) {
    this.#json = json;
    this.#walk = prepare(db, WALK_SEALED_TASKS, true);
    const get = prepare<[tenantId: string, taskId: TaskIdParam], TaskRow>(db, `SELECT ${TASK_READ_COLUMNS} FROM tasks WHERE tenant_id = ? AND task_id = ?`, true);
    const write = prepare<[headers: string, body: string | null, tenantId: string, taskId: TaskIdParam], TaskRow>(db, RESEAL_TASK, true);
    this.#reseal = db.transaction((ref: TaskRef, expected: SealedParts, next: SealedParts): TransitionResult => {
      const taskId = taskIdKey(ref.taskId);
      const row = get.get(ref.tenantId, taskId);
      if (row === undefined) return { kind: 'not_found' };
      const current = taskFromRow(row, json);
      if (!sameSealedParts(current, expected)) return { kind: 'refused', task: current };
      const written = write.get(JSON.stringify(next.headers), next.body, ref.tenantId, taskId);
      if (written === undefined) throw new Error(`Task ${ref.taskId} was read but not written in one transaction.`);
      return { kind: 'applied', task: taskFromRow(written, json) };
    });
  }

  async walkSealedTasks(page: PageRequest): Promise<Page<RetryTask>> {
    const [tenantId, taskId] = page.cursor === undefined ? ['', undefined] : (decodeCursor('sealed-tasks', page.cursor, 'su') as [string, string]);
    const rows = this.#walk.all(tenantId, taskId === undefined ? FIRST_TASK_ID : uuidBytes(taskId, 'cursor'), page.limit + 1);
    return pageOf(
      rows.map((row) => taskFromRow(row, this.#json)),
      page.limit,
      (t) => encodeCursor('sealed-tasks', [t.tenantId, t.taskId]),
    );
  }

  async resealTask(ref: TaskRef, expected: SealedParts, next: SealedParts): Promise<TransitionResult> {
    return this.#reseal.immediate(ref, expected, next);
  }
}
