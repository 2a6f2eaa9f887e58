-- 005-access: who may call the API (see `AccessStore`): API keys, stored only as the SHA-256 of their secret part,
-- and each tenant's own limits on the API.
--
-- Applied once by `migrate.ts`, which records it in `schema_migrations`. Two new tables; nothing existing is touched,
-- so it costs nothing on a database of any size. Times are epoch ms, REAL, as everywhere (see 001-init.sql).

-- Keys are few (people make them) and read by id on every authenticated request (the callers cache them briefly):
-- WITHOUT ROWID, so that read is one lookup in the primary key. A key is never deleted: revoking sets `revoked_at`,
-- once, and an id stays taken for good (a key that was leaked cannot come back under a new secret).
CREATE TABLE api_keys (
  key_id      TEXT NOT NULL PRIMARY KEY,
  tenant_id   TEXT NOT NULL,
  -- The scopes of `ApiKeyScope` (store/store.ts); the conformance suite stores a key of each.
  scope       TEXT NOT NULL CHECK (scope IN ('admin', 'write', 'read')),
  name        TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_at  REAL NOT NULL,
  revoked_at  REAL
) STRICT, WITHOUT ROWID;

-- A tenant's keys in id order (`listApiKeys` with a tenant), walked from a keyset cursor; the listing of every
-- tenant's keys walks the primary key instead.
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, key_id);

-- `hasActiveApiKey` is one seek here: without it, a store whose keys were mostly revoked would be walked until the
-- first active one. Partial, so it holds the active keys only.
CREATE INDEX api_keys_active ON api_keys (key_id) WHERE revoked_at IS NULL;

-- A tenant without a row has no limits of its own (the service-wide defaults apply); deleting its limits deletes the
-- row. NULL in a column: no such limit.
CREATE TABLE tenant_limits (
  tenant_id           TEXT    NOT NULL PRIMARY KEY,
  requests_per_second REAL    CHECK (requests_per_second >= 0),
  max_pending_tasks   INTEGER CHECK (max_pending_tasks >= 0),
  updated_at          REAL    NOT NULL
) STRICT, WITHOUT ROWID;
