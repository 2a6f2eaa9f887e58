-- release-leases: hands held leases back at shutdown: due now, no attempt counted.
--
-- args:    $1 json: an array of {tenant_id, task_id, fencing_token}; $2 float8: now; $3 text: the wake-up channel
-- results: one row `released`: how many tasks went back to PENDING (those still IN_FLIGHT with their token)
-- effects: the target queue of every released task has its hint lowered to now if later and its version raised,
--          always (the rule of 003-targets.sql), and, with an in-flight limit, its throttle dropped back to its
--          bucket's part (a slot is free: 004-target-limits.sql), in key order after the task rows. `NOTIFY` on $3
--          when any was released, delivered at commit.
-- errors:  none
--
-- The fence is written as in complete-attempts.sql, so that each row is found by its primary key.
WITH input AS (
  SELECT * FROM json_to_recordset($1::json) AS r(tenant_id text, task_id uuid, fencing_token bigint)
),
released AS (
  UPDATE tasks AS t SET
    status = {{due_status}},
    next_attempt_at = $2::float8,
    lease_owner = NULL,
    lease_expires_at = NULL,
    version = t.version + 1,
    updated_at = $2::float8
  FROM input
  WHERE t.tenant_id = input.tenant_id AND t.task_id = input.task_id
    AND CASE WHEN t.status = {{leased_status}} THEN t.fencing_token END = input.fencing_token
  RETURNING t.queue_id
),
requeued AS (
  INSERT INTO target_queues AS q (tenant_id, target_key, next_due_at)
  SELECT k.tenant_id, k.target_key, $2::float8
  FROM (SELECT DISTINCT queue_id FROM released) AS r
  -- The key by the queue's number (011-task-queue-number.sql), for the upsert's key order.
  JOIN target_queues AS k ON k.queue_id = r.queue_id
  ORDER BY k.tenant_id, k.target_key
  ON CONFLICT (tenant_id, target_key) DO UPDATE SET
    next_due_at = least(q.next_due_at, excluded.next_due_at),
    version = q.version + 1,
    throttled_until = CASE WHEN q.max_in_flight IS NULL THEN q.throttled_until
                           ELSE bucket_refill_at(q.tokens, q.tokens_at, q.rate_per_second) END
),
woken AS (
  SELECT count(pg_notify($3::text, '')) AS notified FROM (SELECT FROM released LIMIT 1) AS any_released
)
SELECT (SELECT count(*) FROM released) AS released FROM woken
