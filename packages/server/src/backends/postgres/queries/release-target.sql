-- release-target: ends a target queue's hold at once; a queue not held (or unknown) is left as it is.
--
-- args:    $1 text: tenant id; $2 text: target key; $3 text: the wake-up channel
-- results: none
-- effects: `NOTIFY` on $3 when a hold ended on a queue with PENDING tasks (instances asleep until the hold's end
--          look now), delivered at commit.
-- errors:  none
WITH released AS (
  UPDATE target_queues SET held_until = NULL
  WHERE tenant_id = $1::text AND target_key = $2::text AND held_until IS NOT NULL
  RETURNING next_due_at
),
woken AS (
  SELECT count(pg_notify($3::text, '')) AS notified FROM released WHERE next_due_at IS NOT NULL
)
SELECT notified FROM woken
