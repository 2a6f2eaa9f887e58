-- find-expired-leases: IN_FLIGHT tasks whose lease lapsed by $1, earliest first (tasks_lease). Changes nothing.
--
-- args:    $1 float8: now; $2 integer: most rows
-- results: task rows, lease_expires_at ascending
-- errors:  none
SELECT
  tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body, body_ref,
  policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
  next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version,
  cancel_requested, last_error, last_response_status, dead_letter_reason, trace_context
FROM tasks
WHERE status = 'IN_FLIGHT' AND lease_expires_at <= $1::float8
ORDER BY lease_expires_at
LIMIT $2::integer
