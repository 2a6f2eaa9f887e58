-- replace-policy: overwrites an existing named policy, raising its version and keeping its creation time.
--
-- args:    $1 text: tenant id; $2 text: policy id; $3 jsonb: the policy; $4 float8: updated at;
--          $5 json: the policy's callback, or null
-- results: the stored policy row, or none when there is no such policy
-- errors:  none
UPDATE policies SET policy = $3::jsonb, updated_at = $4::float8, callback = $5::json, version = version + 1
WHERE tenant_id = $1::text AND policy_id = $2::text
RETURNING tenant_id, policy_id, policy, callback, created_at, updated_at, version
