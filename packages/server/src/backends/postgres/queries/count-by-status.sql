-- count-by-status: task counts by status over every tenant (GROUP BY over tasks_by_status).
--
-- Linear in the number of tasks (an index-only scan once vacuum has set the visibility map): for readiness
-- and metrics, never in the dispatch path.
--
-- args:    none
-- results: rows (status, n)
-- errors:  none
SELECT status, count(*) AS n FROM tasks GROUP BY status
