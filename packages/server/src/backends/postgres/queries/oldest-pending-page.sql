-- oldest-pending-page: one page of a tenant's PENDING tasks, oldest first, with each task's target, for
-- `AdminReads.oldestPending` (store/oldest-pending.ts walks the pages and keeps each target's first).
--
-- The tenant's PENDING stretch of tasks_by_status (tenant_id, status, created_at, task_id) from a position on, in
-- index order, and each row's queue by target_queues_id: a page costs its rows, never the rest of the backlog.
-- A task waiting on a retry scheduled far ahead is PENDING, and is read like any other.
--
-- args:    $1 text: tenant id; $2 float8: created_at of the last task of the previous page ('-Infinity' for the
--          first); $3 uuid: its task id (any for the first page); $4 integer: rows to return
-- results: rows (target_key, created_at, task_id), by (created_at, task_id) ascending
-- errors:  none
SELECT q.target_key, t.created_at, t.task_id
FROM tasks AS t
JOIN target_queues AS q ON q.queue_id = t.queue_id
WHERE t.tenant_id = $1::text AND t.status = {{due_status}}
  AND (t.created_at, t.task_id) > ($2::float8, $3::uuid)
ORDER BY t.created_at, t.task_id
LIMIT $4::integer
