-- release-leases: hands held leases back at shutdown: due now, no attempt counted.
--
-- args:    $1 json: an array of {tenant_id, task_id, fencing_token}; $2 float8: now; $3 text: the wake-up channel
-- results: one row `released`: how many tasks went back to PENDING (those still IN_FLIGHT with their token)
-- effects: `NOTIFY` on $3 when any was released, delivered at commit
-- errors:  none
--
-- The fence is written as in complete-attempts.sql, so that each row is found by its primary key.
WITH input AS (
  SELECT * FROM json_to_recordset($1::json) AS r(tenant_id text, task_id text, fencing_token bigint)
),
released AS (
  UPDATE tasks AS t SET
    status = 'PENDING',
    next_attempt_at = $2::float8,
    lease_owner = NULL,
    lease_expires_at = NULL,
    version = t.version + 1,
    updated_at = $2::float8
  FROM input
  WHERE t.tenant_id = input.tenant_id AND t.task_id = input.task_id
    AND CASE WHEN t.status = 'IN_FLIGHT' THEN t.fencing_token END = input.fencing_token
  RETURNING t.task_id
),
woken AS (
  SELECT count(pg_notify($3::text, '')) AS notified FROM (SELECT FROM released LIMIT 1) AS any_released
)
SELECT (SELECT count(*) FROM released) AS released FROM woken
