-- 013-callbacks: who is told when a task ends (`callback` in domain/task-fields.ts), and the callbacks owed.
--
-- Applied once, in one transaction, by `migrate.ts`. A database made by 012 is migrated in place. Cost on an existing
-- database: one read of every task row (SQLite checks a column added to a STRICT table against every row), no row
-- rewritten (a column added without a default reads as NULL in the rows stored before it), once. A task without a
-- callback keeps NULL: no byte more in its row beyond the record header's.
--
-- `callbacks_owed`: one row per ended task whose callback has not been made into a task of its own yet (the store's
-- outbox). Written by the trigger below in the very statement that ends the task (a completion's final outcome,
-- `cancelTask`), so an end is never recorded without its callback owed, whichever statement ended it; read and
-- deleted by the callback relay (callbacks/callback-relay.ts) once the callback's task is inserted. `owed_at` is the
-- time of the end (the task's `updated_at`): the relay's order, and its guard when it deletes a row (a task replayed
-- and ended again meanwhile owes its new end, which the relay must not delete unseen). A task ended again before the
-- relay made its earlier callback owes one row, its latest end.
--
-- The trigger's condition is read for every status change, the hot path's claims and retries included: it tests the
-- new status first (a claim or a retry writes 0 or 1 and stops there) and reads `callback` only for an ending task.
CREATE TABLE callbacks_owed (
  tenant_id TEXT NOT NULL,
  task_id   BLOB NOT NULL,
  owed_at   REAL NOT NULL,
  PRIMARY KEY (tenant_id, task_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX callbacks_owed_order ON callbacks_owed (owed_at);

ALTER TABLE tasks ADD COLUMN callback TEXT;

-- A policy's callback (`StoredPolicy.callback`): given at enqueue to its tasks that name none. NULL for every policy
-- stored before.
ALTER TABLE policies ADD COLUMN callback TEXT;

CREATE TRIGGER tasks_owe_callback AFTER UPDATE OF status ON tasks
WHEN NEW.status >= 2 AND OLD.status < 2 AND NEW.callback IS NOT NULL
BEGIN
  INSERT INTO callbacks_owed (tenant_id, task_id, owed_at) VALUES (NEW.tenant_id, NEW.task_id, NEW.updated_at)
  ON CONFLICT (tenant_id, task_id) DO UPDATE SET owed_at = excluded.owed_at;
END;
