import { TaskStatus } from '@retryd/core';
import type { TaskQuery } from '../../store/store.js';
import { decodeCursor } from '../../store/cursor.js';
import type { QueryName } from './queries.js';

/** The greatest UUID (RFC 9562 §5.10), the task id of the first page's start. */
const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/**
 * The statement and parameters of one `listTasks` page: one walk of `tasks_by_status` per status, merged, every
 * status when none is asked for; a policy or a target is a filter on those walks (no index leads by either, see
 * 007-task-space.sql). The first page starts after `('Infinity', MAX_UUID)` (no task is created at an infinite
 * time, so any id would do), so one statement serves the first page and the next ones.
 *
 * @throws InvalidCursorError when `query.cursor` was not made by the task listing
 */
export function taskListing(query: TaskQuery): { name: QueryName; values: unknown[] } {
  const after = query.cursor === undefined ? [Infinity, MAX_UUID] : decodeCursor('tasks', query.cursor, 'nu');
  const status = query.status ?? [];
  const statuses = [...new Set(typeof status === 'string' ? [status] : status)];
  const rows = query.limit + 1;
  const targetKey = query.targetKey ?? null;
  const walked = statuses.length > 0 ? statuses : Object.values(TaskStatus);
  return { name: 'list-tasks-by-status', values: [query.tenantId, walked, query.policyId ?? null, ...after, rows, targetKey] };
}
