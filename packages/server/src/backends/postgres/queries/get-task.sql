-- get-task: one task by id.
--
-- args:    $1 text: tenant id; $2 text: task id
-- results: the task row, or none
-- errors:  none
SELECT
  tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body, body_ref,
  policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
  next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version,
  cancel_requested, last_error, last_response_status, dead_letter_reason, trace_context
FROM tasks
WHERE tenant_id = $1::text AND task_id = $2::text
