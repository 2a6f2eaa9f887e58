-- list-tasks-by-policy: one page of a tenant's tasks on one named policy, newest first (tasks_by_policy).
--
-- args:    $1 text: tenant id; $2 text: policy id; $3 float8, $4 text: the (created_at, task_id) the page
--          starts after ('Infinity' and '' for the first page); $5 integer: rows to return (page size + 1)
-- results: task rows, created_at then task_id descending
-- errors:  none
SELECT
  tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body, body_ref,
  policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
  next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version,
  cancel_requested, last_error, last_response_status, dead_letter_reason, trace_context
FROM tasks
WHERE tenant_id = $1::text AND policy_id = $2::text AND (created_at, task_id) < ($3::float8, $4::text)
ORDER BY created_at DESC, task_id DESC
LIMIT $5::integer
