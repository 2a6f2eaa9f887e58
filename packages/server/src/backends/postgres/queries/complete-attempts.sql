-- complete-attempts: applies the ends of attempts (or of lapsed leases) and logs the attempts, in one statement.
--
-- A completion applies only while its task is IN_FLIGHT with the same fencing token (and, with
-- `require_lease_expired_by`, a lease lapsed by then); anything else is fenced out and changes nothing, so a
-- worker paused past its lease cannot overwrite the task's new owner. A task on which a cancel was requested
-- takes the `c_` outcome instead when `has_cancel`, and then logs the `ac_` attempt when there is one. The attempt
-- rows are inserted by the same statement, so a recorded attempt and the task change it led to commit together,
-- or not at all. The outcome's `expires_at` (a final one's end of retention, NULL for a retry) is one more column of
-- the same UPDATE: a final outcome adds the row's entry to tasks_expiry (012-task-retention.sql), a retry none.
--
-- args:    $1 float8: now;
--          $2 onward: the completions, one array per column (the macro `completion_records`, completion-columns.ts):
--          `i` (index in the call), tenant_id, task_id, fencing_token, require_lease_expired_by (or null),
--          has_cancel, the outcome columns both plain and `c_`-prefixed, the attempt's columns `a_`-prefixed and the
--          attempt logged instead when the `c_` outcome applies `ac_`-prefixed (all null when there is none)
-- results: for each completion applied, `i` and a summary of the changed row (status, next_attempt_at, version,
--          cancel_requested); the others were fenced out
-- effects: the target queue of every task made PENDING (a retry, a lapsed lease) has its hint lowered to the task's
--          due time if later and its version raised, always (the rule of 003-targets.sql), in key order after the
--          task rows. Every task applied leaves IN_FLIGHT: a queue with an in-flight limit has a slot free, and its
--          throttle drops back to its bucket's part (004-target-limits.sql), in the same upsert. No NOTIFY: the
--          instance that decided a retry schedules it itself.
-- errors:  23505 on attempts_pkey when an attempt number is already logged: the whole statement (every
--          completion of the call) is rolled back
--
-- The fence is written `CASE WHEN status = 'IN_FLIGHT' THEN fencing_token END = <token>` (the token holding the
-- lease, NULL when none does) rather than `status = 'IN_FLIGHT' AND fencing_token = <token>`: the plain form lets
-- the planner reach the row through tasks_by_status's IN_FLIGHT range, whose length (dead entries included)
-- grows with the load, instead of through the primary key.
WITH input AS (
  SELECT * FROM {{completion_records}}
),
-- A task named twice in one call: the first completion (in input order) that holds its lease applies, as if
-- the completions were applied one after another; the later ones are fenced out.
holding AS (
  SELECT DISTINCT ON (input.tenant_id, input.task_id) input.*
  FROM input
  JOIN tasks AS t ON t.tenant_id = input.tenant_id AND t.task_id = input.task_id
  WHERE CASE WHEN t.status = {{leased_status}} THEN t.fencing_token END = input.fencing_token
    AND (input.require_lease_expired_by IS NULL OR t.lease_expires_at <= input.require_lease_expired_by)
  ORDER BY input.tenant_id, input.task_id, input.i
),
applied AS (
  UPDATE tasks AS t SET
    status = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_status ELSE h.status END,
    attempt_number = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_attempt_number ELSE h.attempt_number END,
    next_attempt_at = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_next_attempt_at ELSE h.next_attempt_at END,
    run_started_at = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_run_started_at ELSE h.run_started_at END,
    last_delay_ms = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_last_delay_ms ELSE h.last_delay_ms END,
    last_error = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_last_error ELSE h.last_error END,
    last_response_status = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_last_response_status ELSE h.last_response_status END,
    dead_letter_reason = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_dead_letter_reason ELSE h.dead_letter_reason END,
    expires_at = CASE WHEN h.has_cancel AND t.cancel_requested THEN h.c_expires_at ELSE h.expires_at END,
    lease_owner = NULL,
    lease_expires_at = NULL,
    version = t.version + 1,
    updated_at = $1::float8
  FROM holding AS h
  WHERE t.tenant_id = h.tenant_id AND t.task_id = h.task_id
    AND CASE WHEN t.status = {{leased_status}} THEN t.fencing_token END = h.fencing_token
    AND (h.require_lease_expired_by IS NULL OR t.lease_expires_at <= h.require_lease_expired_by)
  RETURNING
    h.i, t.queue_id, t.status, t.next_attempt_at, t.version, t.cancel_requested,
    -- `cancel_requested` is never changed here: true with has_cancel means the `c_` branch was applied.
    h.has_cancel AND t.cancel_requested AS cancelled,
    h.a_tenant_id, h.a_task_id, h.a_attempt_number, h.a_started_at, h.a_duration_ms, h.a_response_status,
    h.a_error_message, h.a_outcome, h.a_response_body_snippet, h.a_next_attempt_at, h.a_worker_id, h.a_delayed_by,
    h.a_backoff_at,
    h.ac_tenant_id, h.ac_task_id, h.ac_attempt_number, h.ac_started_at, h.ac_duration_ms, h.ac_response_status,
    h.ac_error_message, h.ac_outcome, h.ac_response_body_snippet, h.ac_next_attempt_at, h.ac_worker_id, h.ac_delayed_by,
    h.ac_backoff_at
),
logged AS (
  INSERT INTO attempts (
    tenant_id, task_id, attempt_number, started_at, duration_ms, response_status, error_message,
    outcome, response_body_snippet, next_attempt_at, worker_id, delayed_by, backoff_at)
  SELECT
    ac_tenant_id, ac_task_id, ac_attempt_number, ac_started_at, ac_duration_ms, ac_response_status,
    ac_error_message, ac_outcome, ac_response_body_snippet, ac_next_attempt_at, ac_worker_id, ac_delayed_by, ac_backoff_at
  FROM applied
  WHERE cancelled AND ac_attempt_number IS NOT NULL
  UNION ALL
  SELECT
    a_tenant_id, a_task_id, a_attempt_number, a_started_at, a_duration_ms, a_response_status,
    a_error_message, a_outcome, a_response_body_snippet, a_next_attempt_at, a_worker_id, a_delayed_by, a_backoff_at
  FROM applied
  WHERE a_attempt_number IS NOT NULL AND NOT (cancelled AND ac_attempt_number IS NOT NULL)
),
ended AS (
  -- By the queue's number, then its key (011-task-queue-number.sql): the upsert below locks queue rows in key order.
  SELECT q.tenant_id, q.target_key, q.max_in_flight, e.due
  FROM (
    SELECT queue_id, min(next_attempt_at) FILTER (WHERE status = {{due_status}}) AS due
    FROM applied
    GROUP BY queue_id
  ) AS e
  JOIN target_queues AS q ON q.queue_id = e.queue_id
),
requeued AS (
  INSERT INTO target_queues AS q (tenant_id, target_key, next_due_at)
  SELECT e.tenant_id, e.target_key, e.due
  FROM ended AS e
  -- A queue given no PENDING task is written only when it has an in-flight limit: an upsert would lock the row even
  -- where it changes nothing, and every success of a busy unlimited target would queue on it. The limit is read
  -- with the queue's key, unlocked; the upsert re-reads the row it locks.
  WHERE e.due IS NOT NULL OR e.max_in_flight IS NOT NULL
  ORDER BY e.tenant_id, e.target_key
  ON CONFLICT (tenant_id, target_key) DO UPDATE SET
    next_due_at = least(q.next_due_at, excluded.next_due_at),
    version = CASE WHEN excluded.next_due_at IS NULL THEN q.version ELSE q.version + 1 END,
    throttled_until = CASE WHEN q.max_in_flight IS NULL THEN q.throttled_until
                           ELSE bucket_refill_at(q.tokens, q.tokens_at, q.rate_per_second) END
)
SELECT i, status, next_attempt_at, version, cancel_requested FROM applied
