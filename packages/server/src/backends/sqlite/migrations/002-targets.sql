-- 002-targets: every task's target as a key, and the target queues that claims share and hold.
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by
-- 001 is migrated in place: every existing task gets its target key and every existing target its queue row.
-- Cost on an existing database: one rewrite of every task row (the backfill) and one sort of all tasks by
-- target (the queue rows), both once.

-- The target: the origin of `target_url` (domain/target-key.ts). `target_url` is stored as a WHATWG href without
-- userinfo (the enqueuer refuses credentials in URLs), so scheme and host are already lower case, a default port
-- is already left out, and the origin is the href up to the first `/` after `://` (every http(s) href has one;
-- without one the whole href is taken).
--
-- The DEFAULT only exists because ALTER TABLE cannot add a NOT NULL column without one; no row keeps it (the
-- backfill below), and every INSERT names every task column (derived from domain/task-fields.ts), so no task is
-- ever stored with it. A CHECK (target_key <> '') cannot be added here: SQLite tests it against the rows as they
-- are before the backfill.
ALTER TABLE tasks ADD COLUMN target_key TEXT NOT NULL DEFAULT '';

UPDATE tasks SET target_key = substr(
  target_url,
  1,
  instr(target_url, '://') + 2 + instr(substr(target_url, instr(target_url, '://') + 3) || '/', '/') - 1
);

-- The scheduler's only way into tasks: one target queue's due PENDING tasks in due order. A claim reads each ready
-- queue's head here (tenant_id, target_key equal, next_attempt_at <= now) and stops after its share, so a queue's
-- backlog costs a claim only the rows it takes, and a held queue's none: its head is never looked up. Partial, so
-- it holds pending tasks only. An entry is larger than 001's (the two keys lead it), which SQLite stores in full.
DROP INDEX tasks_due;
CREATE INDEX tasks_due ON tasks (tenant_id, target_key, next_attempt_at) WHERE status = 'PENDING';

-- One row per target queue: the PENDING tasks of one (tenant_id, target_key). Every target a task was ever stored
-- for has a row (inserts create it), so the moves that make a task PENDING only ever lower a row's hint.
--
--   next_due_at      A hint: never later than the earliest due PENDING task of the queue, possibly earlier (a claim
--                    took that task; nothing else makes it early). NULL: the queue has no PENDING task. Every move
--                    that makes a task PENDING lowers it in its own transaction; a cancel, and a claim that finds
--                    the queue with nothing due, set it back to the exact minimum (see transactions.ts). A claim that
--                    drains a queue leaves it early rather than pay a write per claim: `nextDueAt` reads the true
--                    heads of the first queues in hint order (sqlite-store.ts), so an early hint costs a read there.
--                    SQLite has one writer at a time, so a hint never goes late between two statements.
--   held_until       The target gate: until then, claims skip the queue. NULL (or past): not held.
--   hold_changed_at  When the hold was last set or ended, for the record.
--   ready_at         When the queue is next ready: the later of its hint and its hold's end; NULL when it has no
--                    PENDING task (a hold alone never makes a queue ready).
--
-- A rowless (WITHOUT ROWID) table keyed by the queue: every write and read of a queue is one lookup by key.
CREATE TABLE target_queues (
  tenant_id       TEXT NOT NULL,
  target_key      TEXT NOT NULL,
  next_due_at     REAL,
  held_until      REAL,
  hold_changed_at REAL,
  ready_at        REAL GENERATED ALWAYS AS (CASE WHEN held_until > next_due_at THEN held_until ELSE next_due_at END) VIRTUAL,
  PRIMARY KEY (tenant_id, target_key)
) STRICT, WITHOUT ROWID;

-- Claims find ready queues here (`ready_at <= now`), and `nextDueAt` reads its first entry: neither looks at a queue
-- that is held, idle or not yet due, nor at any task. Partial, so idle queues (every target ever seen) stay out of
-- it. SQLite reads the queue's row for each entry (it does not treat an index on a generated column as covering):
-- one lookup per ready queue in a table of one row per target.
CREATE INDEX target_queues_ready ON target_queues (ready_at) WHERE ready_at IS NOT NULL;

-- Every target seen so far, with its exact hint. One pass over all tasks, once.
INSERT INTO target_queues (tenant_id, target_key, next_due_at)
SELECT tenant_id, target_key, min(CASE WHEN status = 'PENDING' THEN next_attempt_at END)
FROM tasks
GROUP BY tenant_id, target_key;
