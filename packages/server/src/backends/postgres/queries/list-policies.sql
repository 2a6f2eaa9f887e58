-- list-policies: one page of a tenant's policies in id order (the policies primary key).
--
-- args:    $1 text: tenant id; $2 text: the policy id the page starts after ('' for the first page);
--          $3 integer: rows to return (page size + 1)
-- results: policy rows, policy_id ascending (byte order)
-- errors:  none
SELECT tenant_id, policy_id, policy, callback, created_at, updated_at, version
FROM policies
WHERE tenant_id = $1::text AND policy_id > $2::text
ORDER BY policy_id
LIMIT $3::integer
