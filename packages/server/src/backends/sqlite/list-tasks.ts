import type { Database, Statement } from 'better-sqlite3';
import { LIVE_STATUSES, TaskStatus, isLive } from '@retryd/core';
import type { TaskQuery } from '../../store/store.js';
import { LEASED_STATUS } from '../../store/transition-guards.js';
import { statusIn } from './status-guards.js';
import { TASK_READ_COLUMNS, type TaskRow } from './task-row.js';
import { uuidBytes } from '../sql/task-id-params.js';

/** The keyset position after which a page starts: the last row of the previous page. */
export interface TaskCursor {
  createdAt: number;
  taskId: string;
}

type ListParams = Record<string, string | number | Buffer>;

/** Which optional terms a listing has: each combination is its own prepared statement. */
export interface ListingShape {
  byPolicy: boolean;
  byTarget: boolean;
  withCursor: boolean;
}

const ALL_STATUSES: readonly TaskStatus[] = Object.values(TaskStatus);

// The WHERE terms that lead SQLite to each status's index (001-init.sql). They are literals, not parameters: the
// planner can only use a partial index whose condition the query's own terms imply. `ended_at IS NULL` names
// `tasks_live` (live statuses), `ended_at IS NOT NULL` names `tasks_ended` (terminal ones), and the leased status
// (IN_FLIGHT) alone names `tasks_in_flight`.
const ARM_TERMS = Object.fromEntries(
  ALL_STATUSES.map((status) => {
    if (status === LEASED_STATUS) return [status, ` AND ${statusIn([status])}`];
    return [status, ` AND ended_at IS ${isLive(status) ? '' : 'NOT '}NULL AND ${statusIn([status])}`];
  }),
) as Readonly<Record<TaskStatus, string>>;
/** All live statuses at once: one walk of `tasks_live`, no status filter. */
const LIVE_TERMS = ' AND ended_at IS NULL';

/**
 * Builds and caches the task listing for each shape of query (which statuses, with or without a policy filter
 * a target filter and a cursor): at most 2^6 × 8 statements, each prepared once.
 *
 * Every arm walks one index backwards and stops after `limit` rows (see the index notes in 001-init.sql): PENDING
 * walks `tasks_live`, IN_FLIGHT `tasks_in_flight`, a terminal status its range of `tasks_ended`; a policy or a target
 * is a filter on those walks (no index leads by either: see 006-task-space.sql). Several statuses (no filter means
 * all six) become one arm per status joined
 * by UNION ALL under one ORDER BY: SQLite merges the already ordered arms (`MERGE (UNION ALL)`), so no listing
 * ever sorts the table, which a plain `status IN (…)` would.
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
    if (query.policyId !== undefined) params['policyId'] = query.policyId;
    if (query.targetKey !== undefined) params['targetKey'] = query.targetKey;
    if (after !== undefined) {
      params['afterCreatedAt'] = after.createdAt;
      params['afterTaskId'] = uuidBytes(after.taskId, 'cursor');
    }
    const shape = { byPolicy: query.policyId !== undefined, byTarget: query.targetKey !== undefined, withCursor: after !== undefined };
    return this.#statement(statuses, shape).all(params);
  }

  /**
   * The SQL for one shape; exported through the class for the query-plan test. Params: `tenantId`, `limit`, and
   * with `byPolicy` `policyId`, with `byTarget` `targetKey`, with `withCursor` `afterCreatedAt` and `afterTaskId`.
   * A policy or target filter is one more term on the same walks (no index leads by either outside the PENDING due
   * index, which leads by target).
   * @throws Error for a status that is not one of {@link TaskStatus} (statuses are written into the SQL).
   */
  static sql(statuses: readonly TaskStatus[], { byPolicy, byTarget, withCursor }: ListingShape): string {
    for (const status of statuses) {
      if (!Object.hasOwn(ARM_TERMS, status)) throw new Error(`Unknown task status ${JSON.stringify(status)}.`);
    }
    const wanted = new Set(statuses.length === 0 ? ALL_STATUSES : statuses);
    const arm = (terms: string) =>
      [
        // The task id once more, as stored, last: the compound's ORDER BY names it, and it is the listing indexes' key.
        `SELECT ${TASK_READ_COLUMNS}, task_id FROM tasks WHERE tenant_id = @tenantId`,
        terms,
        byPolicy ? ' AND policy_id = @policyId' : '',
        byTarget ? ' AND queue_id = (SELECT queue_id FROM target_queues WHERE tenant_id = @tenantId AND target_key = @targetKey)' : '',
        withCursor ? ' AND (created_at, task_id) < (@afterCreatedAt, @afterTaskId)' : '',
      ].join('');
    const arms: string[] = [];
    if (LIVE_STATUSES.every((status) => wanted.has(status))) {
      arms.push(arm(LIVE_TERMS));
      for (const status of LIVE_STATUSES) wanted.delete(status);
    }
    for (const status of ALL_STATUSES) if (wanted.has(status)) arms.push(arm(ARM_TERMS[status]));
    return `${arms.join('\nUNION ALL\n')}\nORDER BY created_at DESC, task_id DESC LIMIT @limit`;
  }

  #statement(statuses: readonly TaskStatus[], shape: ListingShape): Statement<[ListParams], TaskRow> {
    const key = `${statuses.join(',')}:${shape.byPolicy}:${shape.byTarget}:${shape.withCursor}`;
    let statement = this.#cache.get(key);
    if (statement === undefined) {
      statement = this.#db.prepare<ListParams, TaskRow>(TaskListing.sql(statuses, shape)).raw(true);
      this.#cache.set(key, statement);
    }
    return statement;
  }
}

/** The distinct statuses of a filter, in a fixed order (one cache entry per set); none means every status. */
function statusesOf(status: TaskQuery['status']): TaskStatus[] {
  if (status === undefined) return [];
  const wanted = new Set<TaskStatus>(typeof status === 'string' ? [status] : status);
  const known = ALL_STATUSES.filter((s) => wanted.has(s));
  // An unknown value is kept so that `sql()` refuses it loudly rather than dropping the filter.
  for (const s of wanted) if (!known.includes(s)) known.push(s);
  return known;
}
