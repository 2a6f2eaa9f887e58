-- 015-metrics-scope: API keys of scope `metrics` (store/store.ts `ApiKeyScope`), a scraper's credential that reads
-- `GET /metrics` and nothing else.
--
-- Applied once, in one transaction, by `migrate.ts`. A database made by 014 is migrated in place. SQLite cannot change
-- a CHECK without a new table, so `api_keys` is copied into one with the wider CHECK, then its indexes are made again
-- (as in 005-access.sql). Cost on an existing database: keys are few (people make them), so the copy is a few pages,
-- once. No other table names `api_keys`: nothing else is touched.
CREATE TABLE api_keys_next (
  key_id      TEXT NOT NULL PRIMARY KEY,
  tenant_id   TEXT NOT NULL,
  -- The scopes of `ApiKeyScope` (store/store.ts); the conformance suite stores a key of each.
  scope       TEXT NOT NULL CHECK (scope IN ('admin', 'write', 'read', 'metrics')),
  name        TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_at  REAL NOT NULL,
  revoked_at  REAL
) STRICT, WITHOUT ROWID;

INSERT INTO api_keys_next (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at)
SELECT key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at FROM api_keys;

DROP TABLE api_keys;
ALTER TABLE api_keys_next RENAME TO api_keys;

CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, key_id);
CREATE INDEX api_keys_active ON api_keys (key_id) WHERE revoked_at IS NULL;
