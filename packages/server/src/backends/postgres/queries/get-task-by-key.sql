-- get-task-by-key: one task by idempotency key (through tasks_idempotency_key).
--
-- args:    $1 text: tenant id; $2 text: idempotency key
-- results: the task row, or none
-- errors:  none
SELECT {{task_columns}}
FROM tasks
WHERE tenant_id = $1::text AND idempotency_key = $2::text
