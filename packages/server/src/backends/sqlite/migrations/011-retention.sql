-- 011-retention: when a finished task is deleted (`expires_at`), and the index through which the purge finds the tasks
-- whose time has come (`Store.purgeExpired`, purge-expired.ts).
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 010
-- is migrated in place. Cost on an existing database: two reads of every task row (SQLite checks a column added to a
-- STRICT table against every row, and the index's build reads them), no row rewritten (a column added without a
-- default reads as NULL in the rows stored before it), once. Tasks that ended before this migration keep NULL: they
-- are kept until deleted by hand, as the field's definition says (domain/task-fields.ts).
--
-- `expires_at`: set by the transition that ends a task (a completion's final outcome, `cancelTask`) to the end of its
-- retention, cleared by `replayTask`. Only an ended task may have one (the CHECK): a live task with a time would be
-- deleted under its worker by the purge, so a statement that tried to give it one fails rather than lose the task
-- later. Claims write neither column of the CHECK, so SQLite does not evaluate it for them.
ALTER TABLE tasks ADD COLUMN expires_at REAL CHECK (expires_at IS NULL OR ended_at IS NOT NULL);

-- The purge's only way in: ended tasks with a time, earliest first. Partial, so live tasks (and ended ones kept for
-- good) are not in it: a purge batch seeks to its start and reads as many entries as it deletes, whatever the store
-- holds. No statement of the hot paths touches an entry: a claim writes neither `expires_at` nor anything the index
-- holds, and a completion to a retry writes NULL over NULL, which SQLite sees is out of the index before and after.
-- Only the completion that ends a task adds an entry (its one index write more), and the purge removes it.
CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;

-- The space the purge frees: SQLite keeps freed pages in the file for new rows and never shrinks it by itself. A
-- database created by this version is in `auto_vacuum = INCREMENTAL` mode (set by connection.ts before its first
-- table: SQLite cannot change it later), and the purge gives a bounded number of free pages back to the file system
-- after each batch. A database created before keeps the mode it has (NONE, unless set by hand): SQLite switches an
-- existing database to INCREMENTAL only by a `VACUUM`, which rewrites the whole file under an exclusive lock (and
-- needs as much free disk again), so the store never runs one by itself. Its freed pages are reused by new tasks, and
-- the file stops growing once purges keep pace with enqueues. To convert one, stop every instance, then run
-- `sqlite3 retryd.db 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;'`.
