import { TERMINAL_STATUSES, type TaskStatus } from '@retryd/core';
import type { BlobStore } from '../blobs/blob-store.js';
import { RetrydError } from '../domain/errors.js';
import { deletePurgedBodies } from '../retention/purger.js';
import type { PageRequest, PurgedTask, Store } from '../store/store.js';
import { isoDateTimeMs } from '../domain/iso-date-time.js';
import { MAX_EPOCH_MS } from './enqueue-input.js';
import { callStore } from './store-failure.js';

const TIME_RULE = 'epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a time zone';

/**
 * `finishedBefore` as a query gives it: epoch ms (`1767225600000`) or an ISO 8601 date-time with a time zone
 * (`2026-01-01T00:00:00Z`); a 400 naming the field and the rule otherwise.
 */
export function parseFinishedBefore(value: string): number {
  const ms = /^\d{1,16}$/.test(value) ? Number(value) : isoDateTimeMs(value);
  if (Number.isInteger(ms) && ms >= 0 && ms <= MAX_EPOCH_MS) return ms;
  const message = `finishedBefore must be ${TIME_RULE}, got ${JSON.stringify(value)}`;
  throw RetrydError.validation([{ field: 'finishedBefore', rule: TIME_RULE, message }]);
}

/** Which finished tasks a delete by hand takes: some finished statuses (default all four), ended before a time, one target. */
export interface FinishedTaskFilter {
  /** SUCCEEDED, FAILED, EXHAUSTED, CANCELLED (the route refuses any other); default all four. */
  statuses?: readonly TaskStatus[];
  /** Only tasks that ended (their last change, `updatedAt`) before this time, epoch ms. */
  finishedBefore: number;
  targetKey?: string;
}

/** One page of a delete by hand: the tasks deleted, and where the next page starts while more may match. */
export interface DeletionPage {
  deleted: PurgedTask[];
  nextCursor?: string;
}

/** Options of {@link FinishedTaskDeletion}. */
export interface FinishedTaskDeletionOptions {
  store: Pick<Store, 'kind' | 'listTasks' | 'deleteFinishedTasks'>;
  /** Where bodies kept apart live: each deleted task's is deleted from it, as the purge does. */
  blobs?: Pick<BlobStore, 'delete'>;
}

/**
 * Deletes a tenant's finished tasks by hand (`DELETE /retry-tasks`), a page at a time: lists a page of the tasks in
 * the statuses asked for (newest first), keeps those that ended before `finishedBefore`, and has the store delete
 * them, each only if it is still finished at the version listed (`Store.deleteFinishedTasks`): a task replayed since
 * the listing is never deleted. Each goes with its attempts, its idempotency key and its body kept apart, as the
 * retention's purge deletes. Deleted tasks leave the listing and the cursor walks on past the others, so a caller
 * repeating with `nextCursor` until there is none deletes every task that matched.
 */
export class FinishedTaskDeletion {
  constructor(private readonly options: FinishedTaskDeletionOptions) {}

  /**
   * One page. A page may delete fewer than `limit` tasks, even none (tasks that ended later than `finishedBefore`
   * are listed too), with a `nextCursor` to go on. `report` is told of a body that could not be deleted.
   */
  async deletePage(
    tenantId: string,
    page: PageRequest,
    filter: FinishedTaskFilter,
    report: (error: unknown, context: { operation: string }) => void,
  ): Promise<DeletionPage> {
    const { store } = this.options;
    const statuses = filter.statuses === undefined || filter.statuses.length === 0 ? TERMINAL_STATUSES : filter.statuses;
    const listed = await callStore(store.kind, 'list tasks', () =>
      store.listTasks({ ...page, tenantId, status: statuses, ...(filter.targetKey === undefined ? {} : { targetKey: filter.targetKey }) }),
    );
    const doomed = listed.items
      .filter((task) => TERMINAL_STATUSES.includes(task.status) && task.updatedAt < filter.finishedBefore)
      .map(({ taskId, version }) => ({ taskId, version }));
    const deleted = doomed.length === 0 ? [] : await callStore(store.kind, 'delete tasks', () => store.deleteFinishedTasks(tenantId, doomed));
    await deletePurgedBodies(this.options.blobs, deleted, report);
    return listed.nextCursor === undefined ? { deleted } : { deleted, nextCursor: listed.nextCursor };
  }
}
