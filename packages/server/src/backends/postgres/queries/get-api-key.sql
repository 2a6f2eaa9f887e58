-- get-api-key: one API key by id, revoked or not (the authentication's lookup).
--
-- args:    $1 text: key id
-- results: one row (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at), or none
-- errors:  none
SELECT key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at FROM api_keys WHERE key_id = $1::text
