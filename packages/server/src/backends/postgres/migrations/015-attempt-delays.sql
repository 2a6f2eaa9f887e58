-- 015-attempt-delays: why a retry was scheduled later than its backoff said (`delayedBy`, `backoffAt` in
-- domain/task.ts `AttemptLog`), on the attempt that led to it: its target's retry budget was spent, and the retry
-- took the next slot of the budget's pacer (protection/retry-pacer.ts). The budget lives in one instance's memory,
-- so the log entry is the only record of why; the API's attempt view, the CLI and the console show it.
--
-- Applied once, in one transaction, by `migrate.ts`. A database made by 014 is migrated in place. Cost on an existing
-- database: the new columns have no default, so adding them changes the catalogue only (no row is rewritten, nothing
-- is scanned under the ALTER's lock): every row stored before reads NULL in both. An attempt whose retry was not
-- delayed (almost every one) keeps NULL in both: a bit each in the row's null bitmap, no data byte. No CHECK on the
-- reason, as none on `outcome`: the stores keep what the engine decided, and SQLite's attempts table could not change
-- one without a copy of the whole log.
ALTER TABLE attempts
  ADD COLUMN delayed_by text,
  ADD COLUMN backoff_at double precision;
