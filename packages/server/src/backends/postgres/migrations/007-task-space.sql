-- 007-task-space: less space per task (see docs/stores.md, "What a task costs in each store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 006
-- is migrated in place. Cost on an existing database: one rewrite of `tasks` and of its indexes (the type change),
-- under an ACCESS EXCLUSIVE lock for its duration, once.
--
-- `request_hash`: the SHA-256 of the enqueue request as its 32 bytes (`bytea`, 33 bytes on disk) rather than 64 hex
-- characters (65). The store writes and reads it as the same lower-case hex text (codec `hex`,
-- backends/sql/digest-bytes.ts), so the idempotency compare stays exact. A stored hash that is not lower-case hex
-- (whose bytes would read back as other text) becomes NULL, which NOT NULL refuses, and the migration with it.
ALTER TABLE tasks ALTER COLUMN request_hash TYPE bytea
  USING CASE WHEN request_hash ~ '^([0-9a-f]{2})+$' THEN decode(request_hash, 'hex') END;

-- `tasks_by_policy` is gone (about a ninth of a pending task's bytes): a listing by policy is a filter on the status
-- walks of `tasks_by_status`, as a listing by target is. Such a listing reads the tasks of other policies in the
-- statuses it walks until its page is full; no statement of the hot paths (claims, completions, inserts) ever read
-- this index, and every insert wrote it.
DROP INDEX tasks_by_policy;
