-- insert-policy: registers a named policy if its id is free.
--
-- args:    $1 text: tenant id; $2 text: policy id; $3 jsonb: the policy; $4 float8: created at;
--          $5 float8: updated at; $6 bigint: version; $7 json: the policy's callback, or null
-- results: none; the row count is 1 when created, 0 when the id was taken
-- errors:  none
INSERT INTO policies (tenant_id, policy_id, policy, created_at, updated_at, version, callback)
VALUES ($1::text, $2::text, $3::jsonb, $4::float8, $5::float8, $6::bigint, $7::json)
ON CONFLICT (tenant_id, policy_id) DO NOTHING
