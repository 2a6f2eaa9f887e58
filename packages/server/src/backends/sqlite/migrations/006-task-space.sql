-- 006-task-space: less space per task (see docs/stores.md, "What a task costs in each store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 005
-- is migrated in place. Cost on an existing database: one rewrite of every task row (the new column's backfill, then
-- the old column's drop), once. The pages freed stay in the file, for new rows, until a `VACUUM`.
--
-- `request_hash`: the SHA-256 of the enqueue request as its 32 bytes (a BLOB) rather than 64 hex characters. The
-- store writes and reads it as the same lower-case hex text (codec `hex`, backends/sql/digest-bytes.ts), so the
-- idempotency compare stays exact. The backfill refuses (NOT NULL fails, and the migration with it) a stored hash
-- that is not lower-case hex, rather than store bytes that would read back as other text. The DEFAULT only exists
-- because ALTER TABLE cannot add a NOT NULL column without one: the backfill replaces it in every row, and every
-- INSERT names every task column. Added as a new column and renamed: a STRICT table cannot change a column's type.
ALTER TABLE tasks ADD COLUMN request_hash_bytes BLOB NOT NULL DEFAULT x'';

UPDATE tasks SET request_hash_bytes = CASE
  WHEN length(request_hash) % 2 = 0 AND request_hash <> '' AND request_hash NOT GLOB '*[^0-9a-f]*' THEN unhex(request_hash)
END;

ALTER TABLE tasks DROP COLUMN request_hash;
ALTER TABLE tasks RENAME COLUMN request_hash_bytes TO request_hash;

-- `tasks_by_policy` is gone (about a fifth of a pending task's bytes): a listing by policy is a filter on the status
-- walks (`tasks_live`, `tasks_in_flight`, `tasks_ended`), as a listing by target is. Such a listing reads the tasks of
-- other policies in the statuses it walks until its page is full; no statement of the hot paths (claims,
-- completions, inserts) ever read this index, and every insert wrote it.
DROP INDEX tasks_by_policy;
