-- 012-task-retention: a finished task's `expires_at` (`expiresAt` in domain/task-fields.ts), and the index the purge
-- finds expired tasks through (purge-expired.sql).
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 011
-- is migrated in place. Cost on an existing database: the new column has no default, so adding it changes the catalogue
-- only (no row is rewritten); the index is built by one read of `tasks` under a SHARE lock (writes to `tasks` wait for
-- it, reads do not) and is empty when it is done, since every task stored before has no `expires_at` (kept until it
-- is deleted by hand, as domain/task-fields.ts says). Tasks that end from then on get one.
--
-- The column comes last in the row (ALTER TABLE appends it), after variable-length ones: a value then costs 8 bytes
-- and up to 7 of alignment, only on finished tasks; NULL on a live task costs nothing (the row already has a null
-- bitmap).
ALTER TABLE tasks ADD COLUMN expires_at double precision;

-- The purge's only way in: finished tasks by the end of their retention, earliest first. Partial, so it holds the
-- finished tasks that have a retention and nothing else: a purge never walks live tasks, and the writes of live tasks
-- (insert, claim, retry: none of which has an `expires_at`) add no entry to it. Only the completions and cancels that
-- end a task add one; a replay clears `expires_at` and leaves the old entry to vacuum, like a purge.
CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;

-- What autovacuum needs now that rows are deleted steadily (no setting is changed here). Every task the purge deletes
-- leaves a dead row in `tasks` and its attempts' dead rows in `attempts`, with their entries in every index (the
-- primary keys, tasks_idempotency_key, tasks_by_status, tasks_expiry). Their space is reused only once a vacuum has
-- removed them; until then new rows cannot use it, so the tables and indexes grow, and scans step over the dead entries
-- (the head of tasks_expiry, where the next purge starts, is where the last one deleted: a btree marks such entries
-- dead once a scan finds them dead to every transaction, so mostly only the first scan after a batch pays).
--
-- - `tasks` is vacuumed at 2% dead (001-init.sql and 011), and by TaskVacuum every few seconds while rows change
--   (unless `vacuum_interval_ms=0`); the purge counts its deletes as changes, so a busy purge triggers it as claims do.
-- - `attempts` has the defaults: a vacuum once 20% of the table is dead (`autovacuum_vacuum_scale_factor` 0.2). In a
--   steady state, where the purge deletes about what is logged, the table settles at about a fifth more than its
--   live rows, which is acceptable; lower its scale factor (as `tasks` has) if that is too much.
-- - Either way, a vacuum must finish faster than the purge deletes: autovacuum must stay on for both tables, its cost
--   limit (`autovacuum_vacuum_cost_limit`, or the table's own) must let a pass over `attempts` end in time, and no
--   long transaction, abandoned replication slot or `hot_standby_feedback` from a lagging standby may hold the
--   oldest xmin back: while one does, no dead row can be removed, and both tables grow whatever the settings.
