-- insert-tasks: inserts a batch of new tasks in one statement, and wakes idle instances if any is PENDING.
--
-- args:    $1 json: an array of task records, one per task: every task column under its own name (`body`
--             holding the body's JSON encoding, a JSON string or null) plus `i`, the task's index in the batch;
--          $2 text: the wake-up channel (`retryd_due_<schema>`)
-- results: (tenant_id, task_id) of each task inserted. A task whose (tenant_id, idempotency_key) is already
--          stored, by an earlier call or earlier in the same batch (lower `i`), is skipped: `ON CONFLICT ... DO
--          NOTHING` waits for a concurrent insert of the same key to end, so exactly one of them inserts.
-- effects: `NOTIFY` on $2 when a PENDING task was inserted, delivered at commit (one per transaction).
-- errors:  23505 on tasks_pkey when a task id is reused under another idempotency key (a caller bug).
WITH input AS (
  SELECT * FROM json_to_recordset($1::json) AS r(
    i integer, tenant_id text, task_id text, idempotency_key text, request_hash text, target_url text,
    method text, headers jsonb, body text, body_ref text, policy_id text, policy jsonb, status text,
    attempt_number integer, run_attempt_offset integer, run_started_at float8, last_delay_ms float8,
    next_attempt_at float8, created_at float8, updated_at float8, lease_owner text,
    lease_expires_at float8, fencing_token bigint, version bigint, cancel_requested boolean, last_error text,
    last_response_status integer, dead_letter_reason text, trace_context text)
),
inserted AS (
  INSERT INTO tasks (
    tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body, body_ref,
    policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
    next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version,
    cancel_requested, last_error, last_response_status, dead_letter_reason, trace_context)
  SELECT
  tenant_id, task_id, idempotency_key, request_hash, target_url, method, headers, body::json, body_ref,
  policy_id, policy, status, attempt_number, run_attempt_offset, run_started_at, last_delay_ms,
  next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at, fencing_token, version,
  cancel_requested, last_error, last_response_status, dead_letter_reason, trace_context
  FROM input
  ORDER BY i
  ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
  RETURNING tenant_id, task_id, status
),
woken AS (
  SELECT count(pg_notify($2::text, '')) AS notified
  FROM (SELECT FROM inserted WHERE status = 'PENDING' LIMIT 1) AS pending
)
SELECT inserted.tenant_id, inserted.task_id FROM inserted CROSS JOIN woken
