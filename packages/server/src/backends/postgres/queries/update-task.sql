-- update-task: the optimistic change the API makes (cancel, cancel requested, replay) to one task.
--
-- Applies only while the task's version is still $3: every change raises the version, so a task that was
-- claimed, completed or changed since the caller read it is left alone and the caller decides again. Leaving
-- IN_FLIGHT drops the lease, which also fences out its holder.
--
-- args:    $1 text: tenant id; $2 text: task id; $3 bigint: expected version; $4 jsonb: the patch, one key
--          per changed column (a key that is absent keeps the stored value; a JSON null stores NULL);
--          $5 text: the wake-up channel
-- results: the changed task row, or none (version mismatch or no such task)
-- effects: `NOTIFY` on $5 when the task is left PENDING by a patch that set its status or due time (a replay).
-- errors:  23514 when the patch would break a CHECK (a PENDING task without a due time: a caller bug)
WITH updated AS (
  UPDATE tasks SET
    status = CASE WHEN $4::jsonb ? 'status' THEN ($4::jsonb ->> 'status') ELSE status END,
    next_attempt_at = CASE WHEN $4::jsonb ? 'next_attempt_at' THEN ($4::jsonb ->> 'next_attempt_at')::float8 ELSE next_attempt_at END,
    cancel_requested = CASE WHEN $4::jsonb ? 'cancel_requested' THEN ($4::jsonb ->> 'cancel_requested')::boolean ELSE cancel_requested END,
    run_attempt_offset = CASE WHEN $4::jsonb ? 'run_attempt_offset' THEN ($4::jsonb ->> 'run_attempt_offset')::integer ELSE run_attempt_offset END,
    run_started_at = CASE WHEN $4::jsonb ? 'run_started_at' THEN ($4::jsonb ->> 'run_started_at')::float8 ELSE run_started_at END,
    last_delay_ms = CASE WHEN $4::jsonb ? 'last_delay_ms' THEN ($4::jsonb ->> 'last_delay_ms')::float8 ELSE last_delay_ms END,
    dead_letter_reason = CASE WHEN $4::jsonb ? 'dead_letter_reason' THEN ($4::jsonb ->> 'dead_letter_reason') ELSE dead_letter_reason END,
    last_error = CASE WHEN $4::jsonb ? 'last_error' THEN ($4::jsonb ->> 'last_error') ELSE last_error END,
    last_response_status = CASE WHEN $4::jsonb ? 'last_response_status' THEN ($4::jsonb ->> 'last_response_status')::integer ELSE last_response_status END,
    updated_at = CASE WHEN $4::jsonb ? 'updated_at' THEN ($4::jsonb ->> 'updated_at')::float8 ELSE updated_at END,
    lease_owner = CASE WHEN $4::jsonb ->> 'status' <> 'IN_FLIGHT' THEN NULL ELSE lease_owner END,
    lease_expires_at = CASE WHEN $4::jsonb ->> 'status' <> 'IN_FLIGHT' THEN NULL ELSE lease_expires_at END,
    version = version + 1
  WHERE tenant_id = $1::text AND task_id = $2::text AND version = $3::bigint
  RETURNING
    tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body, body_ref,
    policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
    next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version,
    cancel_requested, last_error, last_response_status, dead_letter_reason, trace_context
),
woken AS (
  SELECT count(pg_notify($5::text, '')) AS notified
  FROM updated
  WHERE updated.status = 'PENDING' AND ($4::jsonb ? 'status' OR $4::jsonb ? 'next_attempt_at')
)
SELECT updated.* FROM updated CROSS JOIN woken
