-- release-target: ends a target queue's hold at once; a queue not held is left as it is.
--
-- An unknown target becomes known (a row with no hold, no hint and no limit), as with hold-target and limit-target.
--
-- args:    $1 text: tenant id; $2 text: target key; $3 text: the wake-up channel
-- results: none
-- effects: `NOTIFY` on $3 when a hold ended on a queue with PENDING tasks (instances asleep until the hold's end
--          look now), delivered at commit.
-- errors:  none
WITH released AS (
  INSERT INTO target_queues AS q (tenant_id, target_key)
  VALUES ($1::text, $2::text)
  ON CONFLICT (tenant_id, target_key) DO UPDATE SET held_until = NULL
    WHERE q.held_until IS NOT NULL
  RETURNING next_due_at
),
woken AS (
  SELECT count(pg_notify($3::text, '')) AS notified FROM released WHERE next_due_at IS NOT NULL
)
SELECT notified FROM woken
