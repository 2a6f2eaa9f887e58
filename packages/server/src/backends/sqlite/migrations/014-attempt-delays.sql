-- 014-attempt-delays: why a retry was scheduled later than its backoff said (`delayedBy`, `backoffAt` in
-- domain/task.ts `AttemptLog`), on the attempt that led to it: its target's retry budget was spent, and the retry
-- took the next slot of the budget's pacer (protection/retry-pacer.ts). The budget lives in one instance's memory,
-- so the log entry is the only record of why; the API's attempt view, the CLI and the console show it.
--
-- Applied once, in one transaction, by `migrate.ts`. A database made by 013 is migrated in place. Cost on an existing
-- database: one read of every attempt row per column (SQLite checks a column added to a STRICT table against every
-- row), no row rewritten (a column added without a default reads as NULL in the rows stored before it), once. An
-- attempt whose retry was not delayed (almost every one) keeps NULL in both: no byte more in its row beyond the record
-- header's.
--
-- No CHECK on the reason, as none on `outcome`: SQLite cannot change a CHECK without copying the table, and a reason
-- added later would have to copy the whole attempt log.
ALTER TABLE attempts ADD COLUMN delayed_by TEXT;
ALTER TABLE attempts ADD COLUMN backoff_at REAL;
