-- 006-access: who may call the API (see `AccessStore` in store/store.ts): API keys, stored only as the SHA-256 of
-- their secret part, and each tenant's own limits on the API.
--
-- Applied in place: two new tables, nothing existing touched, so it costs nothing on a store of any size and
-- instances of the previous version keep running on the schema (they never read these tables). Times are epoch ms,
-- double precision, and keys COLLATE "C" (byte order), as in 001-init.sql.

-- Keys are few (people make them) and read by id on every authenticated request (callers cache them briefly). A key
-- is never deleted: revoking sets `revoked_at`, once (revoke-api-key.sql keeps the first), and an id stays taken for
-- good, so a leaked key cannot come back under a new secret.
CREATE TABLE api_keys (
  key_id      text COLLATE "C" PRIMARY KEY,
  tenant_id   text COLLATE "C" NOT NULL,
  -- The scopes of `ApiKeyScope`; the conformance suite stores a key of each.
  scope       text             NOT NULL CHECK (scope IN ('admin', 'write', 'read')),
  name        text             NOT NULL,
  secret_hash text             NOT NULL,
  created_at  double precision NOT NULL,
  revoked_at  double precision
);

-- A tenant's keys in id order (list-api-keys-of-tenant.sql); every tenant's keys walk the primary key.
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, key_id);

-- `hasActiveApiKey` (has-active-api-key.sql) reads the first entry here: without it, a store whose keys were mostly
-- revoked would be read until its first active key. Partial, so it holds the active keys only.
CREATE INDEX api_keys_active ON api_keys (key_id) WHERE revoked_at IS NULL;

-- A tenant without a row has no limits of its own (the service-wide defaults apply); deleting its limits deletes the
-- row. NULL in a column: no such limit.
CREATE TABLE tenant_limits (
  tenant_id           text COLLATE "C" PRIMARY KEY,
  requests_per_second double precision CHECK (requests_per_second >= 0),
  max_pending_tasks   bigint           CHECK (max_pending_tasks >= 0),
  updated_at          double precision NOT NULL
);
