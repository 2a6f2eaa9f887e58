-- purge-expired: deletes at most $2 finished tasks whose retention ended by $1, earliest first, with their attempts.
--
-- One statement, so one transaction: a task goes with its attempt log, or neither goes. The tasks are found through
-- tasks_expiry (012-task-retention.sql), read from its start in `expires_at` order: it holds finished tasks with a
-- retention and nothing else, so a purge reads about the entries it deletes (and those of earlier purges that no
-- vacuum has removed yet), never a live task, however many the store holds.
--
-- Each row is locked `FOR UPDATE SKIP LOCKED` before it is deleted: two purges at once (two instances, should the
-- purge lease of retention/purger.ts ever be held twice) never delete the same task, and a row another statement
-- holds (a replay, a re-seal) is stepped over and left to a later batch (rows are locked before the LIMIT counts them,
-- so one stepped over does not shorten the batch). A row that a statement committed after this one's snapshot is
-- re-checked on its newest version (READ COMMITTED): a task replayed meanwhile has no `expires_at` and stays.
--
-- Each task goes with its attempts and its idempotency key (the same key enqueued after the commit makes a new task):
-- see the macro purged_tasks_from (query-macros.ts). A body kept apart (the task's body ref, returned) is the caller's
-- to delete (retention/purger.ts).
--
-- args:    $1 float8: now; $2 integer: most tasks to delete (> 0)
-- results: one row per task deleted: its tenant id, task id, status and body ref (the columns of `PurgedTask`,
--          task-row.ts), in no particular order
-- effects: the tasks' rows and their attempts' rows are deleted, each leaving a dead row for vacuum to remove (see
--          012-task-retention.sql for what autovacuum then needs). Target queues are left alone: a finished task
--          counts in no queue's hint or in-flight count.
-- errors:  none
WITH expired AS MATERIALIZED (
  SELECT t.ctid
  FROM tasks AS t
  WHERE t.expires_at <= $1::float8
    -- Finished only: a task a retryd without retention replayed keeps the time it ended with, live (see 012).
    AND t.status IN ('SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED')
    -- Kept while its callback is owed (014-callbacks.sql): the relay reads the task to make it.
    AND NOT EXISTS (SELECT FROM callbacks_owed AS o WHERE o.tenant_id = t.tenant_id AND o.task_id = t.task_id)
  ORDER BY t.expires_at
  LIMIT $2::integer
  FOR UPDATE OF t SKIP LOCKED
),
{{purged_tasks_from:expired}}
SELECT * FROM purged
