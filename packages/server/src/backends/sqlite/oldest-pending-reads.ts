import type { Database } from 'better-sqlite3';
import { oldestPendingOf, type OldestPending, type PendingPage } from '../../store/oldest-pending.js';
import { DUE_STATUS } from '../../store/transition-guards.js';
import { prepare, type Prepared } from './prepared.js';
import { statusCode } from './status-guards.js';

// `AdminReads.oldestPending` on SQLite: each tenant's live tasks oldest first along `tasks_live` (tenant_id,
// created_at, task_id), a page at a time, each row's status and queue read from the table (no index holds both), and
// the first PENDING task of each target kept (store/oldest-pending.ts). No index of its own: one more entry per task,
// written by every claim and retry, would cost the dispatch path for a read made once per scrape interval.

/** The first tenant after one that has a target queue. Params: `afterTenantId` (`''` for the first). One seek into `target_queues_key`. */
export const NEXT_QUEUE_TENANT = `SELECT tenant_id FROM target_queues WHERE tenant_id > ? ORDER BY tenant_id LIMIT 1`;

/**
 * A page of a tenant's live tasks, oldest first. Params: `tenantId`, the last `created_at` and `task_id` of the
 * previous page (-Infinity and an empty blob for the first), `limit`. Returns raw {@link LiveRow}s. A walk of the
 * tenant's stretch of `tasks_live` from that position on, which stops after `limit` rows.
 */
export const LIVE_BY_AGE = `
SELECT q.target_key, t.created_at, t.task_id, t.status FROM tasks AS t
JOIN target_queues AS q ON q.queue_id = t.queue_id
WHERE t.tenant_id = ? AND t.ended_at IS NULL AND (t.created_at, t.task_id) > (?, ?)
ORDER BY t.created_at, t.task_id
LIMIT ?`;

/** A {@link LIVE_BY_AGE} row. */
type LiveRow = [targetKey: string, createdAt: number, taskId: Buffer, status: number];

/** Where a page ends: the last row's `created_at` and `task_id`. */
type Position = [createdAt: number, taskId: Buffer];

const FIRST: Position = [-Infinity, Buffer.alloc(0)];
const PENDING = statusCode(DUE_STATUS);

/** The reads behind `AdminReads.oldestPending` of one connection, prepared once. */
export class OldestPendingReads {
  readonly #nextTenant: Prepared<[afterTenantId: string], [tenantId: string]>;
  readonly #liveByAge: Prepared<[tenantId: string, createdAt: number, taskId: Buffer, limit: number], LiveRow>;

  constructor(db: Database) {
    this.#nextTenant = prepare<[string], [string]>(db, NEXT_QUEUE_TENANT, true);
    this.#liveByAge = prepare<[string, number, Buffer, number], LiveRow>(db, LIVE_BY_AGE, true);
  }

  /** See `AdminReads.oldestPending`. */
  read(limit: number): Promise<OldestPending[]> {
    const tenants: string[] = [];
    for (let row = this.#nextTenant.get(''); row !== undefined; row = this.#nextTenant.get(row[0])) tenants.push(row[0]);
    return oldestPendingOf<Position>(
      tenants,
      async (tenantId, after, size) => {
        // The walk runs on the event loop: a long one (a backlog at its bound) lets attempts run between its pages.
        if (after !== undefined) await new Promise((resolve) => setImmediate(resolve));
        return this.#page(tenantId, after ?? FIRST, size);
      },
      limit,
    );
  }

  #page(tenantId: string, [createdAt, taskId]: Position, size: number): PendingPage<Position> {
    const rows = this.#liveByAge.all(tenantId, createdAt, taskId, size);
    const pending: { targetKey: string; createdAt: number }[] = [];
    for (const [targetKey, created, , status] of rows) if (status === PENDING) pending.push({ targetKey, createdAt: created });
    const last = rows.at(-1);
    return { pending, read: rows.length, next: rows.length === size && last !== undefined ? [last[1], last[2]] : undefined };
  }
}
