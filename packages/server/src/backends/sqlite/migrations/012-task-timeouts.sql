-- 012-task-timeouts: a task's own attempt and connect timeouts (`attemptTimeoutMs`, `connectTimeoutMs` in
-- domain/task-fields.ts), given at enqueue; NULL: its target's, else the service's (domain/attempt-timeouts.ts).
--
-- Applied once, in one transaction, by `migrate.ts`. A database made by 011 is migrated in place. Cost on an existing
-- database: one read of every task row per column (SQLite checks a column added to a STRICT table against every row),
-- no row rewritten (a column added without a default reads as NULL in the rows stored before it), once. A task without
-- timeouts of its own keeps NULL in both: no byte more in its row beyond the record header's.
--
-- The bounds are the enqueue's (1 ms to 30 minutes), checked there with the field and the rule named; the CHECKs keep
-- a statement that skipped that check from storing a timeout no attempt could run under.
ALTER TABLE tasks ADD COLUMN attempt_timeout_ms INTEGER CHECK (attempt_timeout_ms IS NULL OR attempt_timeout_ms BETWEEN 1 AND 1800000);
ALTER TABLE tasks ADD COLUMN connect_timeout_ms INTEGER CHECK (connect_timeout_ms IS NULL OR connect_timeout_ms BETWEEN 1 AND 1800000);
