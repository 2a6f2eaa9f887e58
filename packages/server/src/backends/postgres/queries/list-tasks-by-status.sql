-- list-tasks-by-status: one page of a tenant's tasks in some statuses (and maybe one policy, one target), newest first.
--
-- Each status walks its own stretch of tasks_by_status backwards and stops after $6 rows; the outer sort
-- merges at most (statuses x $6) rows. A plain `status = ANY(...)` would read and sort every matching row,
-- which for the dead-letter listing (FAILED and EXHAUSTED) grows with the table. A listing of every task
-- passes all six statuses: there is no (tenant_id, created_at) index to walk instead (see 001-init.sql).
--
-- A policy, like a target, is a filter on the same walks: tasks_by_policy was dropped for space (007-task-space.sql).
--
-- args:    $1 text: tenant id; $2 text[]: distinct statuses; $3 text: policy id, or null for any;
--          $4 float8, $5 uuid: the (created_at, task_id) the page starts after ('Infinity' and the greatest UUID
--          for the first page); $6 integer: rows to return (page size + 1); $7 text: target key, or null for any (a
--          filter on the same walk: no index leads by target outside the PENDING due index)
-- results: task rows, created_at then task_id descending
-- errors:  none
SELECT page.*
FROM unnest($2::text[]) AS s(status)
CROSS JOIN LATERAL (
  SELECT {{task_columns:t}}
  FROM tasks AS t
  WHERE t.tenant_id = $1::text AND t.status = s.status AND ($3::text IS NULL OR t.policy_id = $3::text)
    AND ($7::text IS NULL OR t.queue_id = (
      SELECT q.queue_id FROM target_queues AS q WHERE q.tenant_id = $1::text AND q.target_key = $7::text))
    AND (t.created_at, t.task_id) < ($4::float8, $5::uuid)
  ORDER BY t.created_at DESC, t.task_id DESC
  LIMIT $6::integer
) AS page
ORDER BY page.created_at DESC, page.task_id DESC
LIMIT $6::integer
