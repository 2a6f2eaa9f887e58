-- get-task-by-key: one task by idempotency key (through tasks_idempotency_key).
--
-- args:    $1 text: tenant id; $2 text: idempotency key
-- results: the task row, or none
-- errors:  none
SELECT
  tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body, body_ref,
  policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
  next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version,
  cancel_requested, last_error, last_response_status, dead_letter_reason, trace_context
FROM tasks
WHERE tenant_id = $1::text AND idempotency_key = $2::text
