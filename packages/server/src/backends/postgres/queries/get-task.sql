-- get-task: one task by id.
--
-- args:    $1 text: tenant id; $2 uuid: task id
-- results: the task row, or none
-- errors:  none
SELECT {{task_columns}}
FROM tasks
WHERE tenant_id = $1::text AND task_id = $2::uuid
