-- count-by-status-of-tenant: one tenant's task counts by status (GROUP BY over tasks_by_status).
--
-- The planner reads the tenant's stretch of tasks_by_status (an index-only scan once vacuum has set the
-- visibility map: the narrow index, not the wide task rows), or the table when that is cheaper. Linear in the
-- tenant's tasks either way: for readiness and metrics, never in the dispatch path.
--
-- args:    $1 text: tenant id
-- results: rows (status, n), for the statuses that have tasks
-- errors:  none
SELECT status, count(*) AS n FROM tasks WHERE tenant_id = $1::text GROUP BY status
