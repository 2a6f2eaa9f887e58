-- get-policy: one named policy.
--
-- args:    $1 text: tenant id; $2 text: policy id
-- results: the policy row, or none
-- errors:  none
SELECT tenant_id, policy_id, policy, callback, created_at, updated_at, version
FROM policies
WHERE tenant_id = $1::text AND policy_id = $2::text
