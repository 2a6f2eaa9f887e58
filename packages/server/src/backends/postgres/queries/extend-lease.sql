-- extend-lease: pushes a held lease to a new expiry, if the token still holds it.
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 bigint: fencing token; $4 float8: new lease expiry
-- results: none; the row count is 1 when extended, 0 when the token no longer holds the lease
-- errors:  none
--
-- The fence is written `CASE WHEN status = 'IN_FLIGHT' THEN fencing_token END = $3` (the token holding the
-- lease, NULL when none does) rather than `status = 'IN_FLIGHT' AND fencing_token = $3`: the plain form lets
-- the planner reach the row through tasks_by_status's IN_FLIGHT range, whose length (dead entries included)
-- grows with the load, instead of through the primary key.
UPDATE tasks SET lease_expires_at = $4::float8, version = version + 1
WHERE tenant_id = $1::text AND task_id = $2::uuid
  AND CASE WHEN status = 'IN_FLIGHT' THEN fencing_token END = $3::bigint
