-- cancel-task: cancels a task at once (PENDING → CANCELLED), guarded by the statuses core allows it from.
--
-- The guard is the store's, not the caller's: a task in any other status (an IN_FLIGHT one takes request-cancel
-- instead) is left alone whatever the caller believes. The target queue's hint is not touched: it may now be early,
-- which the next claim to look at the queue corrects (see 003-targets.sql). The task has ended: it is deleted at
-- `expires_at` (purge-expired.sql).
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 text[]: the statuses it may start from (core's
--          `statusesAllowing('cancel')` without the leased one); $4 text: the status it leads to (CANCELLED);
--          $5 float8: now; $6 float8: when its retention ends (expires_at)
-- results: the cancelled task row, or none (another status, or no such task: the caller reads it to tell which)
-- errors:  none
UPDATE tasks SET
  status = $4::text,
  next_attempt_at = NULL,
  lease_owner = NULL,
  lease_expires_at = NULL,
  updated_at = $5::float8,
  expires_at = $6::float8,
  version = version + 1
WHERE tenant_id = $1::text AND task_id = $2::uuid AND status = ANY ($3::text[])
RETURNING {{task_columns}}
