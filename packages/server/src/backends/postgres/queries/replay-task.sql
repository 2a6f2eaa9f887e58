-- replay-task: starts a fresh run of a dead letter (FAILED or EXHAUSTED → PENDING) at the version it was read at.
--
-- Guarded twice: by the statuses core allows a replay from, and by the version the caller decided the run on. The
-- idempotency key, the attempt count and the attempt log stay; the run's offset and start are the caller's, its
-- delay, dead-letter reason and cancel request are cleared. A replayed task is live again: its `expires_at` is cleared
-- too, so the purge never deletes it (its new row version has no entry in tasks_expiry, 012-task-retention.sql).
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 bigint: expected version; $4 text[]: the statuses it may start
--          from (core's DEAD_LETTER_STATUSES); $5 text: the status it leads to (PENDING); $6 float8: due at;
--          $7 integer: the run's attempt offset; $8 float8: the run's start, or null; $9 float8: now (updated at);
--          $10 text: the wake-up channel
-- results: the replayed task row, or none (another status or version, or no such task)
-- effects: its target queue's hint is lowered to the due time if later and its version raised, always (the rule of
--          003-targets.sql); `NOTIFY` on $10, delivered at commit.
-- errors:  none
WITH replayed AS (
  UPDATE tasks SET
    status = $5::text,
    next_attempt_at = $6::float8,
    run_attempt_offset = $7::integer,
    run_started_at = $8::float8,
    last_delay_ms = 0,
    dead_letter_reason = NULL,
    cancel_requested = false,
    expires_at = NULL,
    lease_owner = NULL,
    lease_expires_at = NULL,
    updated_at = $9::float8,
    version = version + 1
  WHERE tenant_id = $1::text AND task_id = $2::uuid AND version = $3::bigint AND status = ANY ($4::text[])
  RETURNING queue_id, {{task_columns}}
),
requeued AS (
  INSERT INTO target_queues AS q (tenant_id, target_key, next_due_at)
  SELECT k.tenant_id, k.target_key, r.next_attempt_at
  FROM replayed AS r
  JOIN target_queues AS k ON k.queue_id = r.queue_id
  WHERE r.status = {{due_status}}
  ON CONFLICT (tenant_id, target_key) DO UPDATE
    SET next_due_at = least(q.next_due_at, excluded.next_due_at), version = q.version + 1
),
woken AS (
  SELECT count(pg_notify($10::text, '')) AS notified FROM replayed
)
SELECT {{task_names}} FROM replayed CROSS JOIN woken
