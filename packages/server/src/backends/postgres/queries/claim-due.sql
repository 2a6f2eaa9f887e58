-- claim-due: claims up to $2 due PENDING tasks for one worker, earliest due first, in one statement.
--
-- The CTE reads tasks_due from its start (a partial index of PENDING tasks by due time: no scan) and locks
-- each row it keeps; SKIP LOCKED steps over rows a concurrent claim has locked, and a row that a concurrent
-- claim changed and committed is re-checked against the WHERE clause (READ COMMITTED), so it no longer
-- qualifies. Two claims, from any number of connections or instances, therefore never return the same task.
-- The due time is left as it was: it records when the attempt was due (dispatch lag is measured from it).
--
-- args:    $1 float8: now (the engine's clock); $2 integer: most tasks to claim; $3 text: worker id;
--          $4 float8: the lease's expiry (now + lease)
-- results: the claimed task rows (IN_FLIGHT, token and version raised), in no particular order
-- errors:  none
WITH due AS (
  SELECT tenant_id, task_id
  FROM tasks
  WHERE status = 'PENDING' AND next_attempt_at <= $1::float8
  ORDER BY next_attempt_at
  LIMIT $2::integer
  FOR UPDATE SKIP LOCKED
)
UPDATE tasks AS t SET
  status = 'IN_FLIGHT',
  lease_owner = $3::text,
  lease_expires_at = $4::float8,
  fencing_token = t.fencing_token + 1,
  version = t.version + 1,
  updated_at = $1::float8
FROM due
WHERE t.tenant_id = due.tenant_id AND t.task_id = due.task_id
RETURNING
  t.tenant_id, t.task_id, t.idempotency_key, t.request_hash, t.target_url, t.method, t.headers, t.body,
  t.body_ref, t.policy_id, t.policy, t.status, t.attempt_number, t.run_attempt_offset, t.run_started_at,
  t.last_delay_ms, t.next_attempt_at, t.created_at, t.updated_at, t.lease_owner, t.lease_expires_at,
  t.fencing_token, t.version, t.cancel_requested, t.last_error, t.last_response_status,
  t.dead_letter_reason, t.trace_context
