-- delete-finished-tasks: deletes finished tasks of one tenant by hand (`Store.deleteFinishedTasks`), each only if it
-- is still in a finished status and at the version its caller listed it at, with its attempts.
--
-- One statement, so one transaction: a task goes with its attempt log, or neither goes. Each task is found by its
-- primary key (tenant, task id) and locked `FOR UPDATE`, waiting for a statement that holds it (a replay) rather than
-- stepping over it: once the lock is taken the row is re-checked on its newest version (READ COMMITTED), so a task
-- replayed meanwhile (live, a higher version) stays. Each goes with its attempts and its idempotency key (the macro
-- purged_tasks_from, query-macros.ts). A body kept apart (the body ref, returned) is the caller's to delete.
--
-- args:    $1 text: tenant id; $2 uuid[]: task ids (NULL for an id of no task's form); $3 bigint[]: the version each
--          was listed at, pairwise with $2; $4 text[]: the finished statuses (core's TERMINAL_STATUSES)
-- results: one row per task deleted: its tenant id, task id, status and body ref (the columns of `PurgedTask`,
--          task-row.ts), in no particular order
-- effects: the tasks' rows and their attempts' rows are deleted, each leaving a dead row for vacuum to remove. Target
--          queues are left alone: a finished task counts in no queue's hint or in-flight count.
-- errors:  none
WITH expired AS MATERIALIZED (
  SELECT t.ctid
  FROM unnest($2::uuid[], $3::bigint[]) AS l(task_id, version)
  JOIN tasks AS t ON t.tenant_id = $1::text AND t.task_id = l.task_id AND t.version = l.version
  WHERE t.status = ANY ($4::text[])
    -- Kept while its callback is owed (014-callbacks.sql): the relay reads the task to make it.
    AND NOT EXISTS (SELECT FROM callbacks_owed AS o WHERE o.tenant_id = t.tenant_id AND o.task_id = t.task_id)
  FOR UPDATE OF t
),
{{purged_tasks_from:expired}}
SELECT * FROM purged
