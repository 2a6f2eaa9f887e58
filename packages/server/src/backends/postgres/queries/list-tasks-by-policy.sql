-- list-tasks-by-policy: one page of a tenant's tasks on one named policy, newest first (tasks_by_policy).
--
-- args:    $1 text: tenant id; $2 text: policy id; $3 float8, $4 text: the (created_at, task_id) the page
--          starts after ('Infinity' and '' for the first page); $5 integer: rows to return (page size + 1);
--          $6 text: target key, or null for any
-- results: task rows, created_at then task_id descending
-- errors:  none
SELECT {{task_columns}}
FROM tasks
WHERE tenant_id = $1::text AND policy_id = $2::text AND (created_at, task_id) < ($3::float8, $4::text)
  AND ($6::text IS NULL OR target_key = $6::text)
ORDER BY created_at DESC, task_id DESC
LIMIT $5::integer
