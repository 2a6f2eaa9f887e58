-- request-cancel: asks for the cancel of a task whose attempt is in flight; the attempt's end applies it.
--
-- Only the flag changes: the lease and its token stay with the holder, whose completion then takes its
-- `ifCancelRequested` outcome (complete-attempts.sql).
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 text[]: the statuses it may start from (core's
--          `statusesAllowing('cancel')` that hold a lease: IN_FLIGHT); $4 float8: now
-- results: the changed task row, or none (another status, or no such task: the caller reads it to tell which)
-- errors:  none
UPDATE tasks SET cancel_requested = true, updated_at = $4::float8, version = version + 1
WHERE tenant_id = $1::text AND task_id = $2::uuid AND status = ANY ($3::text[])
RETURNING {{task_columns}}
