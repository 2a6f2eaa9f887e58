-- 009-task-id-uuid: task ids as their 16 bytes (see docs/stores.md, "What a task costs in each store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 008
-- is migrated in place. Cost on an existing database: one rewrite of `tasks` and `attempts` and of their indexes (the
-- type changes), under an ACCESS EXCLUSIVE lock for its duration, once.
--
-- `task_id` becomes `uuid` (16 bytes) instead of `text` (37 on disk for the 36 characters), in the row, the primary
-- key and `tasks_by_status`, and in `attempts`. Every task id the service makes is a UUID in canonical lower-case
-- text (domain/task-id.ts), which is what a uuid reads back as, and the order of uuids is the byte order of that text
-- ("C" collation), so listings keep their order. A stored id in any other form (another spelling of a UUID would read
-- back changed) becomes NULL, which NOT NULL refuses, and the migration with it.
ALTER TABLE tasks ALTER COLUMN task_id TYPE uuid
  USING CASE WHEN task_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN task_id::uuid END;

ALTER TABLE attempts ALTER COLUMN task_id TYPE uuid
  USING CASE WHEN task_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN task_id::uuid END;
