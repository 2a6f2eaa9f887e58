-- 013-task-timeouts: a task's own attempt and connect timeouts (`attemptTimeoutMs`, `connectTimeoutMs` in
-- domain/task-fields.ts), given at enqueue; NULL: its target's, else the service's (domain/attempt-timeouts.ts).
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 012
-- is migrated in place. Cost on an existing database: the new columns have no default, so adding them changes the
-- catalogue only (no row is rewritten), and the CHECKs are added NOT VALID, so no scan of `tasks` runs under the
-- ALTER's lock: every row stored before reads NULL in both, which the CHECKs accept. A task without timeouts of its
-- own keeps NULL in both: no byte more (the row has a null bitmap).
--
-- The bounds are the enqueue's (1 ms to 30 minutes), checked there with the field and the rule named; the CHECKs keep
-- a statement that skipped that check from storing a timeout no attempt could run under.
ALTER TABLE tasks
  ADD COLUMN attempt_timeout_ms integer,
  ADD COLUMN connect_timeout_ms integer,
  ADD CONSTRAINT tasks_attempt_timeout_ms CHECK (attempt_timeout_ms BETWEEN 1 AND 1800000) NOT VALID,
  ADD CONSTRAINT tasks_connect_timeout_ms CHECK (connect_timeout_ms BETWEEN 1 AND 1800000) NOT VALID;
