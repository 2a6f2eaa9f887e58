-- list-api-keys: one page of every tenant's API keys in id order, revoked ones included (the primary key).
--
-- A page starts at the id its cursor names, as in list-api-keys-of-tenant.sql.
--
-- args:    $1 text: the first key id to return ('' for the first page); $2 integer: rows to return (page size + 1)
-- results: rows (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at), key_id ascending (byte order)
-- errors:  none
SELECT key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at
FROM api_keys
WHERE key_id >= $1::text
ORDER BY key_id
LIMIT $2::integer
