import type { Page, RetryTask } from '../../domain/task.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import type { SealedParts, SealedTaskStore } from '../../store/sealed-task-store.js';
import type { PageRequest, TaskRef, TransitionResult } from '../../store/store.js';
import type { RunQuery } from './postgres-store.js';
import { taskFromRow, type TaskRow } from './task-row.js';
import { taskIdText } from '../sql/task-id-params.js';
import { postgresFailure } from './errors.js';
import { translateFailures } from '../../store/failure-boundary.js';

/** The first page starts after `('', NIL_UUID)`: no tenant id is empty, so any task id would do; this one is the least. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** A body as `reseal-task` takes it: its UTF-8 bytes, as insert-tasks writes it into the `bytea` column. */
const bodyBytes = (body: string | null) => (body === null ? null : Buffer.from(body, 'utf8'));

/**
 * The PostgreSQL store's {@link SealedTaskStore}: the walk follows the primary key (`walk-sealed-tasks.sql`), and a
 * re-seal is one guarded UPDATE (`reseal-task.sql`) that leaves every other column, and so every index of the
 * scheduler, as it is. Get it from `PostgresStore.sealing`; it shares the store's pool.
 */
export class PostgresSealedTasks implements SealedTaskStore {
  readonly #run: RunQuery;

  /** @param run - runs the store's statements (`walk-sealed-tasks`, `reseal-task`, `get-task`) */
  constructor(run: RunQuery) {
    this.#run = run;
  }

  async walkSealedTasks(page: PageRequest): Promise<Page<RetryTask>> {
    const after = page.cursor === undefined ? ['', NIL_UUID] : decodeCursor('sealed-tasks', page.cursor, 'su');
    const rows = (await this.#run<TaskRow>('walk-sealed-tasks', [...after, page.limit + 1])).rows.map(taskFromRow);
    return pageOf(rows, page.limit, (t) => encodeCursor('sealed-tasks', [t.tenantId, t.taskId]));
  }

  async resealTask(ref: TaskRef, expected: SealedParts, next: SealedParts): Promise<TransitionResult> {
    const values = [
      ref.tenantId,
      taskIdText(ref.taskId),
      JSON.stringify(expected.headers),
      bodyBytes(expected.body),
      JSON.stringify(next.headers),
      bodyBytes(next.body),
    ];
    const written = (await this.#run<TaskRow>('reseal-task', values)).rows[0];
    if (written !== undefined) return { kind: 'applied', task: taskFromRow(written) };
    const current = (await this.#run<TaskRow>('get-task', [ref.tenantId, taskIdText(ref.taskId)])).rows[0];
    return current === undefined ? { kind: 'not_found' } : { kind: 'refused', task: taskFromRow(current) };
  }
}

translateFailures(PostgresSealedTasks, postgresFailure);
