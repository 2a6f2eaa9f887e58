-- select-tasks-by-keys: the stored tasks of some idempotency keys (the duplicates of an insert-tasks).
--
-- args:    $1 text[]: tenant ids; $2 text[]: idempotency keys, pairwise with $1
-- results: task rows, one per pair found, in no particular order (through tasks_idempotency_key)
-- errors:  none
SELECT
  t.tenant_id, t.task_id, t.idempotency_key, t.request_hash, t.target_url, t.method, t.headers, t.body,
  t.body_ref, t.policy_id, t.policy, t.status, t.attempt_number, t.run_attempt_offset, t.run_started_at,
  t.last_delay_ms, t.next_attempt_at, t.created_at, t.updated_at, t.lease_owner, t.lease_expires_at,
  t.fencing_token, t.version, t.cancel_requested, t.last_error, t.last_response_status,
  t.dead_letter_reason, t.trace_context
FROM unnest($1::text[], $2::text[]) AS k(tenant_id, idempotency_key)
JOIN tasks AS t ON t.tenant_id = k.tenant_id AND t.idempotency_key = k.idempotency_key
