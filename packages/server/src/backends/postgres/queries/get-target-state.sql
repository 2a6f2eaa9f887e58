-- get-target-state: the shared state kept under one key (breaker, rate limit, retry budget).
--
-- args:    $1 text: tenant id; $2 text: key
-- results: one row (value, version, updated_at), or none
-- errors:  none
SELECT value, version, updated_at FROM target_state WHERE tenant_id = $1::text AND key = $2::text
