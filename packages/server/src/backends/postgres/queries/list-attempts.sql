-- list-attempts: one page of a task's attempt log, oldest first (the attempts primary key).
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 integer: the attempt number the page starts after (0 for
--          the first page); $4 integer: rows to return (page size + 1)
-- results: attempt rows, attempt_number ascending
-- errors:  none
SELECT
  tenant_id, task_id, attempt_number, started_at, duration_ms, response_status, error_message, outcome,
  response_body_snippet, next_attempt_at, worker_id, delayed_by, backoff_at
FROM attempts
WHERE tenant_id = $1::text AND task_id = $2::uuid AND attempt_number > $3::integer
ORDER BY attempt_number
LIMIT $4::integer
