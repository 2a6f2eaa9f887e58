-- list-api-keys-of-tenant: one page of a tenant's API keys in id order, revoked ones included (api_keys_by_tenant).
--
-- A page starts at the id its cursor names, the first key of that page (read as the extra row of the page before),
-- so the first page starts at '' and no id, not even '', is skipped.
--
-- args:    $1 text: tenant id; $2 text: the first key id to return ('' for the first page); $3 integer: rows to
--          return (page size + 1)
-- results: rows (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at), key_id ascending (byte order)
-- errors:  none
SELECT key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at
FROM api_keys
WHERE tenant_id = $1::text AND key_id >= $2::text
ORDER BY key_id
LIMIT $3::integer
