-- revoke-api-key: revokes an API key for good, keeping the first revocation time of a key revoked already.
--
-- One statement, so no check can go stale before its write: a concurrent revoke of the same key waits for the row
-- lock, and its SET is then computed on the row as the first one left it (READ COMMITTED re-reads the updated row),
-- so coalesce keeps the first time. A repeat revoke rewrites the row with its own values: rare, and cheaper to
-- reason about than a read and a write.
--
-- args:    $1 text: key id; $2 float8: now; $3 text: the tenant the key must belong to (NULL: any)
-- results: the key's row after (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at), or none when
--          there is no such key (or it belongs to another tenant than $3)
-- errors:  none
UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2::float8)
WHERE key_id = $1::text AND ($3::text IS NULL OR tenant_id = $3::text)
RETURNING key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at
