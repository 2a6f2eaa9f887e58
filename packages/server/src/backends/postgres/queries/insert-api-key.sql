-- insert-api-key: stores a new API key if its id is free.
--
-- args:    $1 text: key id; $2 text: tenant id; $3 text: scope; $4 text: name; $5 text: SHA-256 of the secret (hex);
--          $6 float8: created at; $7 float8: revoked at (NULL: active)
-- results: none; the row count is 1 when created, 0 when the id was taken (concurrent inserts of one id: ON CONFLICT
--          waits for the other transaction, so exactly one inserts)
-- errors:  23514 check_violation for a scope other than admin, write, read, metrics
INSERT INTO api_keys (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::float8, $7::float8)
ON CONFLICT (key_id) DO NOTHING
