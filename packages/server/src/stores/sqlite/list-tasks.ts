import type { Database, Statement } from 'better-sqlite3';
import type { TaskStatus } from '@retryd/core';
import type { TaskQuery } from '../../store/store.js';
import { TASK_COLUMNS } from './task-row.js';
import type { TaskRow } from './task-row.js';

/** The keyset position after which a page starts: the last row of the previous page. */
export interface TaskCursor {
  createdAt: number;
  taskId: string;
}

type ListParams = Record<string, string | number>;

/**
 * Builds and caches the task listing for each shape of query (how many statuses, with or without a policy
 * filter and a cursor): at most 28 statements, each prepared once.
 *
 * One status walks `tasks_by_status` (or `tasks_by_policy`, or `tasks_by_created`) backwards and stops after
 * `limit` rows. Several statuses become one arm per status joined by UNION ALL under one ORDER BY: SQLite
 * merges the already ordered arms (`MERGE (UNION ALL)`), so listing dead letters never sorts the whole table,
 * which a plain `status IN (…)` would.
 */
export class TaskListing {
  readonly #db: Database;
  readonly #cache = new Map<string, Statement<[ListParams], TaskRow>>();

  constructor(db: Database) {
    this.#db = db;
  }

  /** Rows of one page plus one more, newest first; the extra row only tells that a next page exists. */
  list(query: TaskQuery, after: TaskCursor | undefined): TaskRow[] {
    const statuses = statusesOf(query.status);
    const params: ListParams = { tenantId: query.tenantId, limit: query.limit + 1 };
    statuses.forEach((status, i) => (params[`status${i}`] = status));
    if (query.policyId !== undefined) params['policyId'] = query.policyId;
    if (after !== undefined) {
      params['afterCreatedAt'] = after.createdAt;
      params['afterTaskId'] = after.taskId;
    }
    return this.#statement(statuses.length, query.policyId !== undefined, after !== undefined).all(params);
  }

  /** The SQL for one shape; exported through the class for the query-plan test. */
  static sql(statusCount: number, byPolicy: boolean, withCursor: boolean): string {
    const arm = (status: number | undefined) =>
      [
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE tenant_id = @tenantId`,
        status === undefined ? '' : ` AND status = @status${status}`,
        byPolicy ? ' AND policy_id = @policyId' : '',
        withCursor ? ' AND (created_at, task_id) < (@afterCreatedAt, @afterTaskId)' : '',
      ].join('');
    const arms =
      statusCount === 0 ? [arm(undefined)] : Array.from({ length: statusCount }, (_, i) => arm(i));
    return `${arms.join('\nUNION ALL\n')}\nORDER BY created_at DESC, task_id DESC LIMIT @limit`;
  }

  #statement(statusCount: number, byPolicy: boolean, withCursor: boolean): Statement<[ListParams], TaskRow> {
    const key = `${statusCount}:${byPolicy}:${withCursor}`;
    let statement = this.#cache.get(key);
    if (statement === undefined) {
      statement = this.#db.prepare<ListParams, TaskRow>(TaskListing.sql(statusCount, byPolicy, withCursor));
      this.#cache.set(key, statement);
    }
    return statement;
  }
}

/** The distinct statuses of a filter; none (absent or empty) means every status. */
function statusesOf(status: TaskQuery['status']): TaskStatus[] {
  if (status === undefined) return [];
  return [...new Set(typeof status === 'string' ? [status] : status)];
}
