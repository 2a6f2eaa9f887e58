-- list-tasks-by-status: one page of a tenant's tasks in some statuses (and maybe one policy), newest first.
--
-- Each status walks its own stretch of tasks_by_status backwards and stops after $6 rows; the outer sort
-- merges at most (statuses x $6) rows. A plain `status = ANY(...)` would read and sort every matching row,
-- which for the dead-letter listing (FAILED and EXHAUSTED) grows with the table. A listing of every task
-- passes all six statuses: there is no (tenant_id, created_at) index to walk instead (see 001-init.sql).
--
-- args:    $1 text: tenant id; $2 text[]: distinct statuses; $3 text: policy id, or null for any;
--          $4 float8, $5 text: the (created_at, task_id) the page starts after ('Infinity' and '' for the
--          first page); $6 integer: rows to return (page size + 1)
-- results: task rows, created_at then task_id descending
-- errors:  none
SELECT page.*
FROM unnest($2::text[]) AS s(status)
CROSS JOIN LATERAL (
  SELECT
    t.tenant_id, t.task_id, t.idempotency_key, t.request_hash, t.target_url, t.method, t.headers,
    t.body, t.body_ref, t.policy_id, t.policy, t.status, t.attempt_number, t.run_attempt_offset,
    t.run_started_at, t.last_delay_ms, t.next_attempt_at, t.created_at, t.updated_at, t.lease_owner,
    t.lease_expires_at, t.fencing_token, t.version, t.cancel_requested, t.last_error,
    t.last_response_status, t.dead_letter_reason, t.trace_context
  FROM tasks AS t
  WHERE t.tenant_id = $1::text AND t.status = s.status AND ($3::text IS NULL OR t.policy_id = $3::text)
    AND (t.created_at, t.task_id) < ($4::float8, $5::text)
  ORDER BY t.created_at DESC, t.task_id DESC
  LIMIT $6::integer
) AS page
ORDER BY page.created_at DESC, page.task_id DESC
LIMIT $6::integer
