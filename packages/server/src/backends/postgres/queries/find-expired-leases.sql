-- find-expired-leases: IN_FLIGHT tasks whose lease lapsed by $1, earliest first (tasks_lease). Changes nothing.
--
-- args:    $1 float8: now; $2 integer: most rows
-- results: task rows, lease_expires_at ascending
-- errors:  none
SELECT {{task_columns}}
FROM tasks
WHERE status = {{leased_status}} AND lease_expires_at <= $1::float8
ORDER BY lease_expires_at
LIMIT $2::integer
