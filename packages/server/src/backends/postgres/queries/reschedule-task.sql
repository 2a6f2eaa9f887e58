-- reschedule-task: makes a PENDING task due at another time (run it now, or later), at the version it was read at.
--
-- Guarded twice: by the statuses core allows a reschedule from (PENDING), and by the version the caller decided the
-- time on. Only the due time, `updated_at` and the version change: the attempt count, the run and its budget stay.
-- Moved earlier or later, the task's target queue follows the rule of 003-targets.sql for a statement that makes a
-- task due: the hint is lowered to the new time if that is earlier, and the queue's version raised, always, so a claim
-- computing a refresh from an older snapshot cannot raise the hint past the task. Moved later, the hint may be early
-- (it was the queue's head): the next claim to look at the queue corrects it.
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 bigint: expected version; $4 text[]: the statuses it may start
--          from (core's `statusesAllowing('reschedule')`); $5 text: the status it leads to (PENDING); $6 float8: due
--          at; $7 float8: now (updated at); $8 text: the wake-up channel
-- results: the rescheduled task row, or none (another status or version, or no such task)
-- effects: its target queue's hint lowered and version raised (above); `NOTIFY` on $8, delivered at commit, so the
--          other instances' engines aim their timers at the new time.
-- errors:  none
WITH rescheduled AS (
  UPDATE tasks SET
    status = $5::text,
    next_attempt_at = $6::float8,
    updated_at = $7::float8,
    version = version + 1
  WHERE tenant_id = $1::text AND task_id = $2::uuid AND version = $3::bigint AND status = ANY ($4::text[])
  RETURNING queue_id, {{task_columns}}
),
requeued AS (
  UPDATE target_queues AS q
  SET next_due_at = least(q.next_due_at, r.next_attempt_at), version = q.version + 1
  FROM rescheduled AS r
  WHERE q.queue_id = r.queue_id
),
woken AS (
  SELECT count(pg_notify($8::text, '')) AS notified FROM rescheduled
)
SELECT {{task_names}} FROM rescheduled CROSS JOIN woken
