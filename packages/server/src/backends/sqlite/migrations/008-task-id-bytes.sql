-- 008-task-id-bytes: task ids as their 16 bytes (see docs/stores.md, "What a task costs in each store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 007
-- is migrated in place. Cost on an existing database: one copy of `attempts`, one rewrite of every task row (the new
-- column's backfill, then the old column's drop) and a rebuild of the four indexes that hold the id, once. The pages
-- freed stay in the file, for new rows, until a `VACUUM`.
--
-- `task_id` becomes a BLOB of the UUID's 16 bytes instead of its 36 characters, in the row, `tasks_pk`, the listing
-- indexes and `attempts`: about 20 bytes less in each. Every task id the service makes is a UUID in canonical
-- lower-case text (domain/task-id.ts); the store binds its bytes and reads them back as that text
-- (`backends/sql/task-id-params.ts`, `TASK_READ_COLUMNS` in task-row.ts), and the bytes order as the text does, so
-- listings keep their order. The backfill refuses (NOT NULL fails, and the migration with it) a stored id in any
-- other form rather than store bytes that would read back as other text: it converts only 36 characters, lower case,
-- with the four hyphens in place and 32 hex digits around them (`unhex` gives NULL for anything but hex digits).
--
-- `attempts` is copied into a table of the same name and key without its foreign key to `tasks`: its one writer, a
-- completion, writes the attempt of the task it has just updated in the same transaction, so the check SQLite made
-- on every attempt (a look-up of the task by `tasks_pk`) could never fail, and `ON DELETE CASCADE` had nothing to do:
-- no statement deletes a task (PostgreSQL's 008-attempts-unchecked.sql did the same). It cannot keep it anyway: the
-- key would name a column this migration drops.
CREATE TABLE attempts_by_id_bytes (
  tenant_id             TEXT    NOT NULL,
  task_id               BLOB    NOT NULL,
  attempt_number        INTEGER NOT NULL,
  started_at            REAL    NOT NULL,
  duration_ms           REAL    NOT NULL,
  response_status       INTEGER,
  error_message         TEXT,
  outcome               TEXT    NOT NULL,
  response_body_snippet TEXT,
  next_attempt_at       REAL,
  worker_id             TEXT    NOT NULL,
  PRIMARY KEY (tenant_id, task_id, attempt_number)
) STRICT, WITHOUT ROWID;

INSERT INTO attempts_by_id_bytes
SELECT tenant_id, CASE
    WHEN length(task_id) = 36 AND task_id = lower(task_id)
      AND substr(task_id, 9, 1) || substr(task_id, 14, 1) || substr(task_id, 19, 1) || substr(task_id, 24, 1) = '----'
      AND length(unhex(replace(task_id, '-', ''))) = 16
    THEN unhex(replace(task_id, '-', ''))
  END,
  attempt_number, started_at, duration_ms, response_status, error_message, outcome, response_body_snippet,
  next_attempt_at, worker_id
FROM attempts;

DROP TABLE attempts;
ALTER TABLE attempts_by_id_bytes RENAME TO attempts;

-- The indexes that hold the id go first: SQLite drops no indexed column. Each is made again as it was (001-init.sql,
-- 007-one-in-flight-index.sql).
DROP INDEX tasks_pk;
DROP INDEX tasks_live;
DROP INDEX tasks_in_flight;
DROP INDEX tasks_ended;

-- Added as a new column and renamed: a STRICT table cannot change a column's type. The DEFAULT only exists because
-- ALTER TABLE cannot add a NOT NULL column without one: the backfill replaces it in every row, and every INSERT names
-- every task column.
ALTER TABLE tasks ADD COLUMN task_id_bytes BLOB NOT NULL DEFAULT x'';

UPDATE tasks SET task_id_bytes = CASE
    WHEN length(task_id) = 36 AND task_id = lower(task_id)
      AND substr(task_id, 9, 1) || substr(task_id, 14, 1) || substr(task_id, 19, 1) || substr(task_id, 24, 1) = '----'
      AND length(unhex(replace(task_id, '-', ''))) = 16
    THEN unhex(replace(task_id, '-', ''))
  END;

ALTER TABLE tasks DROP COLUMN task_id;
ALTER TABLE tasks RENAME COLUMN task_id_bytes TO task_id;

CREATE UNIQUE INDEX tasks_pk ON tasks (tenant_id, task_id);
CREATE INDEX tasks_live ON tasks (tenant_id, created_at, task_id, ended_at) WHERE ended_at IS NULL;
CREATE INDEX tasks_in_flight ON tasks (tenant_id, created_at, task_id, target_key, lease_expires_at)
  WHERE status = 'IN_FLIGHT';
CREATE INDEX tasks_ended ON tasks (tenant_id, status, created_at, task_id, ended_at) WHERE ended_at IS NOT NULL;
