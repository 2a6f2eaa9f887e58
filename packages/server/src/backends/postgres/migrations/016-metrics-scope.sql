-- 016-metrics-scope: API keys of scope `metrics` (store/store.ts `ApiKeyScope`), a scraper's credential that reads
-- `GET /metrics` and nothing else.
--
-- Applied once, in one transaction, by `migrate.ts`. A database made by 015 is migrated in place: the CHECK on
-- `api_keys.scope` (named by PostgreSQL after its table and column in 006-access.sql) is replaced by a wider one.
-- Cost on an existing database: the new CHECK reads every key once under the ALTER's lock; keys are few (people make
-- them). Instances of the previous version keep running on the schema: they cannot accept a metrics key, whose stored
-- hash is not its secret's (access/api-key-token.ts `storedHashOf`).
ALTER TABLE api_keys
  DROP CONSTRAINT api_keys_scope_check,
  ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('admin', 'write', 'read', 'metrics'));
