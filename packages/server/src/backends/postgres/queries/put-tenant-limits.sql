-- put-tenant-limits: sets (replaces) a tenant's own limits on the API.
--
-- args:    $1 text: tenant id; $2 float8: requests per second (NULL: none); $3 bigint: most pending tasks (NULL:
--          none); $4 float8: now
-- results: none
-- errors:  23514 check_violation for a negative limit
INSERT INTO tenant_limits (tenant_id, requests_per_second, max_pending_tasks, updated_at)
VALUES ($1::text, $2::float8, $3::bigint, $4::float8)
ON CONFLICT (tenant_id) DO UPDATE SET
  requests_per_second = excluded.requests_per_second,
  max_pending_tasks = excluded.max_pending_tasks,
  updated_at = excluded.updated_at
